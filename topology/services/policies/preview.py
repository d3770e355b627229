"""What a draft node policy does to placement, before it is applied.

For each reference pod (the operators' saved ReferencePods for the cluster and the
global ones; else a 4-, 8- and 16-CPU exclusive Guaranteed pod) the engine judges
the nodes twice: as mirrored, and with the draft policies written
(`topology.adapters.drafts`). A node *gains* a pod it could not host before and
*loses* one it could; how many copies each node could still take is compared too.

Only the nodes whose draft changes something are judged: a node's verdict and
capacity depend on that node alone, so the others cannot gain or lose anything.
Reads only; nothing is written.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from django.db.models import Q

from scheduler_api.engine import (
    ANN_CRANE_CPU_POLICY,
    LABEL_KOORD_QOS,
    ClusterSnapshot,
    WhatIfResult,
    place,
)
from topology.adapters.drafts import drafts_by_node, with_drafts
from topology.adapters.mirror import cluster_snapshot
from topology.models import Cluster, NodePolicy, ReferencePod
from topology.services.whatif.service import pod_from_manifest

DEFAULT_REFERENCE_CPUS = (4, 8, 16)
DEFAULT_MEMORY = "1Gi"
DEFAULT = "default"
SAVED = "saved"
GIVEN = "given"

__all__ = [
    "DEFAULT_REFERENCE_CPUS",
    "NodeEffect",
    "PolicyPreview",
    "PreviewInputError",
    "ReferenceEffect",
    "ReferenceShape",
    "preview_policy_effect",
    "preview_saved_policies",
    "reference_manifest",
    "reference_shapes",
]


@dataclass(frozen=True)
class ReferenceShape:
    """A pod to preview with: its manifest, and its exclusive CPUs when known."""

    name: str
    manifest: dict[str, Any]
    cpus: int | None = None
    source: str = GIVEN


def reference_manifest(*, name: str, cpus: int, memory: str = DEFAULT_MEMORY) -> dict[str, Any]:
    """A Guaranteed pod every system pins to exclusive CPUs.

    Integer CPU with requests == limits (kubelet's static CPU manager), Koordinator QoS
    LSR (koord-scheduler gives it a cpuset) and Crane's `cpu-policy: exclusive`.
    """
    amounts = {"cpu": str(cpus), "memory": memory}
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": name,
            "namespace": "default",
            "labels": {LABEL_KOORD_QOS: "LSR"},
            "annotations": {ANN_CRANE_CPU_POLICY: "exclusive"},
        },
        "spec": {
            "containers": [
                {"name": "main", "resources": {"requests": amounts, "limits": dict(amounts)}}
            ]
        },
    }


def default_shapes() -> list[ReferenceShape]:
    return [
        ReferenceShape(
            f"exclusive-{cpus}-cpu",
            reference_manifest(name=f"exclusive-{cpus}-cpu", cpus=cpus),
            cpus,
            DEFAULT,
        )
        for cpus in DEFAULT_REFERENCE_CPUS
    ]


def shape_of(reference: ReferencePod) -> ReferenceShape:
    """A saved ReferencePod: its manifest when set, else the exclusive pod of its size."""
    if reference.manifest:
        return ReferenceShape(reference.name, dict(reference.manifest), None, SAVED)
    manifest = reference_manifest(
        name=reference.name, cpus=reference.cpus, memory=reference.memory or DEFAULT_MEMORY
    )
    return ReferenceShape(reference.name, manifest, reference.cpus, SAVED)


def reference_shapes(cluster: Cluster) -> list[ReferenceShape]:
    """The cluster's saved reference pods and the global ones; the defaults if none."""
    saved = ReferencePod.objects.filter(Q(cluster=cluster) | Q(cluster__isnull=True))
    shapes = [shape_of(reference) for reference in saved.order_by("cpus", "name")]
    return shapes or default_shapes()


@dataclass(frozen=True)
class NodeEffect:
    """One node under one reference pod, as mirrored (`before`) and with the draft (`after`)."""

    node: str
    fits_before: bool
    fits_after: bool
    capacity_before: int
    capacity_after: int
    reasons_before: tuple[str, ...] = ()
    reasons_after: tuple[str, ...] = ()

    @property
    def gained(self) -> bool:
        return self.fits_after and not self.fits_before

    @property
    def lost(self) -> bool:
        return self.fits_before and not self.fits_after

    def as_json(self) -> dict[str, Any]:
        return {
            "node": self.node,
            "fits_before": self.fits_before,
            "fits_after": self.fits_after,
            "capacity_before": self.capacity_before,
            "capacity_after": self.capacity_after,
            "reasons_before": list(self.reasons_before),
            "reasons_after": list(self.reasons_after),
        }


@dataclass(frozen=True)
class ReferenceEffect:
    shape: ReferenceShape
    nodes: tuple[NodeEffect, ...]

    @property
    def gained(self) -> list[str]:
        return [effect.node for effect in self.nodes if effect.gained]

    @property
    def lost(self) -> list[str]:
        return [effect.node for effect in self.nodes if effect.lost]

    def as_json(self) -> dict[str, Any]:
        return {
            "name": self.shape.name,
            "cpus": self.shape.cpus,
            "source": self.shape.source,
            "gained": self.gained,
            "lost": self.lost,
            "nodes": [effect.as_json() for effect in self.nodes],
        }


@dataclass(frozen=True)
class PolicyPreview:
    """`nodes`: the nodes whose draft changes something; `unchanged`: drafts that change nothing."""

    cluster: str
    nodes: tuple[str, ...]
    unchanged: tuple[str, ...]
    references: tuple[ReferenceEffect, ...]

    def as_json(self) -> dict[str, Any]:
        return {
            "cluster": self.cluster,
            "nodes": list(self.nodes),
            "unchanged": list(self.unchanged),
            "reference_pods": [reference.as_json() for reference in self.references],
        }


def _judged(snapshot: ClusterSnapshot, manifest: dict[str, Any]) -> WhatIfResult:
    """Every node's verdict on the pod and how many copies each could still take."""
    return place(snapshot, pod_from_manifest(manifest), 0, detailed=0)


def _effects(
    before: ClusterSnapshot, after: ClusterSnapshot, shape: ReferenceShape, names: Sequence[str]
) -> tuple[NodeEffect, ...]:
    old_result, new_result = _judged(before, shape.manifest), _judged(after, shape.manifest)
    old = {verdict.node: verdict for verdict in old_result.nodes}
    new = {verdict.node: verdict for verdict in new_result.nodes}
    old_capacity = old_result.capacity.per_node if old_result.capacity else {}
    new_capacity = new_result.capacity.per_node if new_result.capacity else {}
    return tuple(
        NodeEffect(
            node=name,
            fits_before=old[name].fits,
            fits_after=new[name].fits,
            capacity_before=old_capacity.get(name, 0),
            capacity_after=new_capacity.get(name, 0),
            reasons_before=tuple(str(r) for r in old[name].reasons),
            reasons_after=tuple(str(r) for r in new[name].reasons),
        )
        for name in names
        if name in old and name in new
    )


def _shapes(
    cluster: Cluster, reference_pods: Iterable[ReferencePod | ReferenceShape] | None
) -> list[ReferenceShape]:
    if reference_pods is None:
        return reference_shapes(cluster)
    return [p if isinstance(p, ReferenceShape) else shape_of(p) for p in reference_pods]


def preview_policy_effect(
    *,
    cluster: Cluster,
    policies: Iterable[NodePolicy] | None = None,
    reference_pods: Iterable[ReferencePod | ReferenceShape] | None = None,
) -> PolicyPreview:
    """Which nodes gain or lose each reference pod if the draft policies were applied.

    `policies`: the drafts (saved or not; each with its node loaded), by default every
    saved NodePolicy of the cluster. Raises WhatIfInputError for a reference pod whose
    manifest the engine cannot read.
    """
    if policies is None:
        policies = NodePolicy.objects.filter(node__cluster=cluster).select_related("node")
    drafts = drafts_by_node(policies)
    observed = cluster_snapshot(cluster, names=sorted(drafts))
    drafted = with_drafts(observed, drafts)
    pairs = list(zip(observed.nodes, drafted.nodes, strict=True))
    changed = tuple(old.name for old, new in pairs if old is not new)
    unchanged = tuple(sorted(set(drafts) - set(changed)))
    # Unchanged nodes cannot gain or lose a pod: judge only the changed ones.
    before = dataclasses.replace(observed, nodes=tuple(old for old, new in pairs if old is not new))
    after = dataclasses.replace(drafted, nodes=tuple(new for old, new in pairs if old is not new))
    references = tuple(
        ReferenceEffect(shape, _effects(before, after, shape, changed) if changed else ())
        for shape in _shapes(cluster, reference_pods)
    )
    return PolicyPreview(cluster.name, changed, unchanged, references)


class PreviewInputError(ValueError):
    """A preview that cannot run as asked; `field_errors` says what to fix where."""

    def __init__(self, field_errors: Mapping[str, list[str]]) -> None:
        self.field_errors = {k: list(v) for k, v in field_errors.items()}
        super().__init__("; ".join(f"{k}: {' '.join(v)}" for k, v in self.field_errors.items()))


def given_shape(data: Mapping[str, Any]) -> ReferenceShape:
    """A reference pod given with the request: {name, cpus, memory} or {name, manifest}."""
    name = str(data["name"])
    if data.get("manifest"):
        return ReferenceShape(name, dict(data["manifest"]), data.get("cpus"), GIVEN)
    cpus = int(data["cpus"])
    memory = str(data.get("memory") or DEFAULT_MEMORY)
    return ReferenceShape(
        name, reference_manifest(name=name, cpus=cpus, memory=memory), cpus, GIVEN
    )


def preview_saved_policies(
    *,
    cluster: Cluster,
    nodes: Sequence[str] | None = None,
    reference_pods: Sequence[Mapping[str, Any]] | None = None,
) -> PolicyPreview:
    """The API's preview: the saved drafts of `nodes` (default: all) against reference pods."""
    policies = NodePolicy.objects.filter(node__cluster=cluster).select_related("node")
    if nodes is not None:
        policies = policies.filter(node__name__in=list(nodes))
        missing = sorted(set(nodes) - {p.node.name for p in policies})
        if missing:
            raise PreviewInputError(
                {"nodes": [f"no saved draft policy for {', '.join(missing[:20])}"]}
            )
    shapes = None if reference_pods is None else [given_shape(p) for p in reference_pods]
    return preview_policy_effect(cluster=cluster, policies=list(policies), reference_pods=shapes)
