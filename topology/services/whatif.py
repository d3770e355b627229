"""What-if placement as a service: take a Pod manifest, run the engine, answer in JSON.

The one place that turns user input into engine calls and engine results into the
JSON shape shared by `manage.py whatif`, the REST API and the dashboard. Bad input
raises WhatIfInputError with errors per field; a pod that fits nowhere is not an
error, it is an answer.
"""

from __future__ import annotations

import copy
import dataclasses
from collections.abc import Mapping
from typing import Any

import orjson
from django.utils import timezone

from scheduler_api.engine.nrt_match import ScoringStrategy
from scheduler_api.engine.results import reason_text
from scheduler_api.engine.snapshot import ClusterSnapshot, PodSpec
from scheduler_api.engine.whatif import NodeVerdict, Scheduler, WhatIfResult, place
from topology.adapters import pod_spec_of
from topology.adapters.drafts import stored_drafts, with_drafts
from topology.models import Cluster
from topology.parsers import ObjectParseError
from topology.parsers.pod import parse_pod
from topology.selectors.clusters import data_age
from topology.services.answer_cache import remembered_answer
from topology.services.snapshot_cache import cached_cluster_snapshot
from topology.services.whatif_encoding import encoded_shared

SCHEDULERS = tuple(s.value for s in Scheduler)
SCORING_STRATEGIES = tuple(s.value for s in ScoringStrategy)
DEFAULT_SCORING = ScoringStrategy.LEAST_ALLOCATED.value
MAX_REPLICAS = 10_000
DEFAULT_POD_NAME = "whatif-pod"


class WhatIfInputError(ValueError):
    """A what-if request that cannot be run; `field_errors` says what to fix where."""

    def __init__(self, field_errors: Mapping[str, list[str]]) -> None:
        self.field_errors = {k: list(v) for k, v in field_errors.items()}
        summary = "; ".join(f"{k}: {' '.join(v)}" for k, v in self.field_errors.items())
        super().__init__(summary)


# PodLevelResources (beta from Kubernetes 1.34): NodeResourcesFit and the QoS class then
# read the pod's own requests and limits. The engine reads containers only, so such a pod
# would look as if it asked for nothing: refused here rather than answered wrongly.
POD_LEVEL_RESOURCES = (
    "pod-level resources (spec.resources) are not modelled yet: "
    "set the requests and limits on the containers"
)


def pod_from_manifest(manifest: Any) -> PodSpec:
    """A Pod manifest (dict) as the engine's PodSpec; spec.nodeName is ignored."""
    if not isinstance(manifest, dict):
        raise WhatIfInputError({"pod": ["expected a Pod manifest (a JSON/YAML object)"]})
    if manifest.get("kind", "Pod") != "Pod":
        raise WhatIfInputError({"pod": [f"expected kind Pod, got {manifest.get('kind')!r}"]})
    obj = copy.deepcopy(manifest)
    obj.setdefault("apiVersion", "v1")
    obj["kind"] = "Pod"
    metadata = obj.setdefault("metadata", {})
    if isinstance(metadata, dict):
        metadata.setdefault("name", DEFAULT_POD_NAME)
        metadata.setdefault("namespace", "default")
    if isinstance(obj.get("spec"), dict):
        obj["spec"].pop("nodeName", None)
        if obj["spec"].get("resources"):
            raise WhatIfInputError({"pod.spec.resources": [POD_LEVEL_RESOURCES]})
    try:
        record = parse_pod(obj)
    except ObjectParseError as error:
        raise WhatIfInputError({f"pod.{error.field}": [error.message]}) from error
    return pod_spec_of(record, obj)


def check_options(
    *, replicas: Any, scheduler: Any, scoring: Any, weights: Any, capacity: Any = True
) -> dict[str, list[str]]:
    """Field errors of the non-pod inputs (empty when they are all fine)."""
    errors: dict[str, list[str]] = {}
    if not isinstance(capacity, bool):
        errors["capacity"] = ["must be true or false"]
    if isinstance(replicas, bool) or not isinstance(replicas, int) or not 0 <= replicas:
        errors["replicas"] = ["must be a whole number ≥ 0"]
    elif replicas > MAX_REPLICAS:
        errors["replicas"] = [f"at most {MAX_REPLICAS}"]
    if scheduler not in SCHEDULERS:
        errors["scheduler"] = [f"must be one of {', '.join(SCHEDULERS)}"]
    if scoring not in (None, "", *SCORING_STRATEGIES):
        errors["scoring"] = [f"must be one of {', '.join(SCORING_STRATEGIES)}"]
    if weights is not None and (
        not isinstance(weights, Mapping)
        or not all(
            isinstance(k, str) and k and isinstance(v, int) and not isinstance(v, bool) and v >= 1
            for k, v in weights.items()
        )
    ):
        errors["weights"] = ["must map resource names to whole numbers ≥ 1"]
    return errors


def validated_pod(
    pod: Any, *, replicas: Any, scheduler: Any, scoring: Any, weights: Any, capacity: Any = True
) -> PodSpec:
    """The pod as the engine sees it, or WhatIfInputError with every field at fault."""
    errors = check_options(
        replicas=replicas, scheduler=scheduler, scoring=scoring, weights=weights, capacity=capacity
    )
    spec = None
    try:
        spec = pod_from_manifest(pod)
    except WhatIfInputError as error:
        errors.update(error.field_errors)
    if errors or spec is None:
        raise WhatIfInputError(errors)
    return spec


def parse_weights(text: str) -> dict[str, int]:
    """`cpu=1,memory=2` → {"cpu": 1, "memory": 2}; WhatIfInputError when malformed."""
    weights: dict[str, int] = {}
    for part in filter(None, (p.strip() for p in text.split(","))):
        name, sep, value = part.partition("=")
        if not sep or not name.strip() or not value.strip().isdigit() or int(value) < 1:
            raise WhatIfInputError({"weights": [f"{part!r} is not resource=weight (weight ≥ 1)"]})
        weights[name.strip()] = int(value)
    return weights


def node_json(verdict: NodeVerdict) -> dict[str, Any]:
    return {
        "node": verdict.node,
        "fits": verdict.fits,
        "score": verdict.score,
        "reasons": [reason_text(r) for r in verdict.reasons],
        "numa_zones": list(verdict.numa_zones),
        "cpuset": sorted(verdict.cpuset) if verdict.cpuset is not None else None,
        "annotations": dict(verdict.annotations),
        "system": verdict.system.value,
        "notes": list(verdict.notes),
    }


def result_json(result: WhatIfResult, *, encoded: bool = False) -> dict[str, Any]:
    """The engine's answer in the documented JSON shape (plus `system`/`notes` per node).

    `capacity` is null when it was not counted (`place(capacity=False)`): never a zero
    that would read as "nothing more fits".

    `encoded`: `nodes` comes as one `orjson.Fragment` (the same JSON, built faster)."""
    capacity = result.capacity
    nodes: Any = (
        orjson.Fragment(encoded_shared(result.shared_verdicts(), node_json))
        if encoded
        else [node_json(v) for v in result.nodes]
    )
    return {
        "scheduler": result.scheduler.value,
        "scoring": result.scoring.value if result.scoring else DEFAULT_SCORING,
        "data_age_seconds": result.data_age_seconds,
        "nodes": nodes,
        "placements": [
            {
                "replica": p.replica,
                "node": p.node,
                "numa_zones": list(p.numa_zones),
                "cpuset": sorted(p.cpuset) if p.cpuset is not None else None,
            }
            for p in result.placements
        ],
        "capacity": (
            {"total": capacity.total, "per_node": dict(capacity.per_node)}
            if capacity is not None
            else None
        ),
    }


def run_on_snapshot(
    snapshot: ClusterSnapshot,
    pod: Any,
    *,
    replicas: int = 1,
    scheduler: str = "auto",
    scoring: str | None = None,
    weights: dict[str, int] | None = None,
    capacity: bool = True,
    encoded: bool = False,
) -> dict[str, Any]:
    """Validate everything first, then run `place` (which also answers `evaluate`).

    `capacity=False` skips counting how many copies each node could still take (on a
    large cluster most of the engine's time for a pod that binds cpus): the answer's
    `capacity` is then null. `encoded`: see `result_json`."""
    options = {"scheduler": scheduler, "scoring": scoring, "weights": weights}
    spec = validated_pod(pod, replicas=replicas, capacity=capacity, **options)
    result = place(
        snapshot,
        spec,
        replicas,
        scheduler=scheduler,
        scoring=scoring or None,
        weights=weights,
        capacity=capacity,
    )
    return result_json(result, encoded=encoded)


def run_whatif(
    *,
    cluster: Cluster,
    pod: Any,
    replicas: int = 1,
    scheduler: str = "auto",
    scoring: str | None = None,
    weights: dict[str, int] | None = None,
    capacity: bool = True,
    use_draft_policies: bool = False,
    fragments: bool = False,
) -> dict[str, Any]:
    """What-if against a cluster's mirror; reads only, never writes.

    `use_draft_policies`: judge the nodes as if their saved NodePolicies were applied.
    A question asked before on the same mirror version is answered from memory; with
    `fragments` its large parts may come encoded (`answer_cache`), for orjson to render.
    """
    snapshot = mirror_snapshot(cluster, use_draft_policies=use_draft_policies)
    return answer_on_snapshot(
        snapshot,
        pod,
        replicas=replicas,
        scheduler=scheduler,
        scoring=scoring,
        weights=weights,
        capacity=capacity,
        fragments=fragments,
    )


def answer_on_snapshot(
    snapshot: ClusterSnapshot,
    pod: Any,
    *,
    replicas: Any = 1,
    scheduler: Any = "auto",
    scoring: Any = None,
    weights: Any = None,
    capacity: Any = True,
    fragments: bool = False,
) -> dict[str, Any]:
    """`run_on_snapshot`, remembered per mirror version (`answer_cache`): the same
    question on the same mirror is worked out once (per cluster, with a shared cache).
    Whether capacity is counted is part of the question."""
    options = {
        "replicas": replicas,
        "scheduler": scheduler,
        "scoring": scoring,
        "weights": weights,
        "capacity": capacity,
    }
    return remembered_answer(
        snapshot,
        {"pod": pod, **options},
        lambda: run_on_snapshot(snapshot, pod, **options, encoded=True),
        fragments=fragments,
    )


def compare_schedulers(
    *, cluster: Cluster, pod: Any, use_draft_policies: bool = False, **options: Any
) -> dict[str, Any]:
    """The same pod under each scheduler, side by side, on one snapshot."""
    snapshot = mirror_snapshot(cluster, use_draft_policies=use_draft_policies)
    return {
        system: answer_on_snapshot(snapshot, pod, scheduler=system, **options)
        for system in SCHEDULERS
        if system != Scheduler.AUTO
    }


def mirror_snapshot(cluster: Cluster, *, use_draft_policies: bool = False) -> ClusterSnapshot:
    """The one place a what-if reads the mirror, dated by the same rule as every page.

    With `use_draft_policies`, every node that has a saved NodePolicy is seen with its
    desired labels and reservation annotation, as if they were already applied.
    """
    snapshot = cached_cluster_snapshot(cluster)
    if use_draft_policies:
        snapshot = with_drafts(snapshot, stored_drafts(cluster))
    # A cached snapshot was read earlier: date it now, by the one data-age rule.
    return dataclasses.replace(
        snapshot, taken_at=timezone.now(), data_as_of=data_age(cluster).as_of
    )


__all__ = [
    "SCHEDULERS",
    "SCORING_STRATEGIES",
    "WhatIfInputError",
    "answer_on_snapshot",
    "check_options",
    "mirror_snapshot",
    "compare_schedulers",
    "parse_weights",
    "pod_from_manifest",
    "result_json",
    "run_on_snapshot",
    "run_whatif",
    "validated_pod",
]
