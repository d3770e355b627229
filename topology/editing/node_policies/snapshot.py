"""A node's engine snapshot as it would be once a draft policy is written (pure).

The labels and the `node.koordinator.sh/reservation` annotation take their desired
values; what the cluster's agents would derive from them follows:

- koordlet re-emits the reservation with concrete CPUs on its NRT (a count resolved
  with kubelet's takeByTopology over every CPU), which koord-scheduler excludes;
- crane-agent rebuilds its NRT's `topologyManagerPolicy` from the awareness label
  (`None` when it parses false, else `SingleNUMANodePodLevel`).

Koordinator's labels (NUMA policy, allocate strategy, CPU bind policy) are read by
the engine straight from `labels`, as koord-scheduler reads them from the Node.
"""

from __future__ import annotations

import dataclasses

from scheduler_api.engine import Flavour, NodeSnapshot, go_parse_bool
from topology.editing.node_policies.diff import (
    ANNOTATION,
    CRANE_AWARENESS_LABEL,
    CRANE_TOPOLOGY_AWARENESS,
    LABEL,
    RESERVATION,
    DesiredPolicy,
    FieldDiff,
    applied,
    policy_field_diffs,
)
from topology.editing.node_policies.reservation_annotation import observed_body, reserved_cpu_ids
from topology.parsers.errors import FieldError
from topology.parsers.quantity import parse_resource_list

CRANE_AWARE = "SingleNUMANodePodLevel"
CRANE_UNAWARE = "None"

__all__ = ["with_draft_policy"]


def _changed(diffs: list[FieldDiff], field_name: str) -> bool:
    return any(d.field == field_name and d.changed for d in diffs)


def _reservation_fields(node: NodeSnapshot, annotations: dict[str, str]) -> dict[str, object]:
    """The snapshot's reservation fields from the annotation as it would be written."""
    body = observed_body(annotations)
    resolved = reserved_cpu_ids(body, node.cpus)
    try:
        resources = parse_resource_list((body or {}).get("resources"))
    except FieldError:
        resources = {}
    return {
        "node_reserved_cpus": resolved if resolved is not None else frozenset(),
        "node_reservation_apply_policy": str((body or {}).get("applyPolicy") or ""),
        "node_reserved_resources": resources,
    }


def _crane_policy(labels: dict[str, str]) -> str:
    """crane-agent's NRTBuilder.WithNode: unaware only when the label parses false."""
    value = labels.get(CRANE_AWARENESS_LABEL)
    return CRANE_UNAWARE if value is not None and go_parse_bool(value) is False else CRANE_AWARE


def with_draft_policy(node: NodeSnapshot, desired: DesiredPolicy) -> NodeSnapshot:
    """`node` with `desired` written, and what koordlet / crane-agent derive from it."""
    diffs = policy_field_diffs(desired, node.labels, node.annotations)
    if not any(d.changed for d in diffs):
        return node
    labels = applied(node.labels, diffs, LABEL)
    annotations = applied(node.annotations, diffs, ANNOTATION)
    changes: dict[str, object] = {"labels": labels, "annotations": annotations}
    if _changed(diffs, RESERVATION):
        changes.update(_reservation_fields(node, annotations))
    if _changed(diffs, CRANE_TOPOLOGY_AWARENESS) and node.flavour is Flavour.CRANE:
        changes["crane_topology_policy"] = _crane_policy(labels)
    return dataclasses.replace(node, **changes)  # type: ignore[arg-type]
