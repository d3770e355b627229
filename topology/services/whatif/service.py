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
from django.conf import settings
from django.utils import timezone

from scheduler_api.engine import (
    DEFAULT_SCHEDULER_NAME,
    Admission,
    ClusterSnapshot,
    Judge,
    NodeVerdict,
    PodSpec,
    Scheduler,
    SchedulerProfile,
    ScoringStrategy,
    WhatIfResult,
    place,
    reason_text,
    resolve_judge,
)
from topology.adapters import pod_spec_of
from topology.adapters.drafts import stored_drafts, with_drafts
from topology.models import Cluster
from topology.parsers import ObjectParseError
from topology.parsers.names import DNS_SUBDOMAIN
from topology.parsers.nesting import NulCharacter, TooDeep, check_nesting
from topology.parsers.pod import parse_pod
from topology.selectors.clusters import data_age
from topology.services.whatif.answer_cache import remembered_answer
from topology.services.whatif.encoding import encoded_shared
from topology.services.whatif.scheduler_profiles import cluster_profiles, profiles_json
from topology.services.whatif.snapshot_cache import cached_cluster_snapshot

SCHEDULERS = tuple(s.value for s in Scheduler)
SCORING_STRATEGIES = tuple(s.value for s in ScoringStrategy)
MAX_REPLICAS = 10_000
DEFAULT_POD_NAME = "whatif-pod"
SCHEDULER_NAME_PATTERN = DNS_SUBDOMAIN  # a schedulerName is an object name


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


# A what-if pod's size, bounded so that no question can grow an answer or a cache without
# end (a pod naming 50,000 extended resources made a 106 MB answer). Real pods use a few.
MAX_CONTAINERS = 64
MAX_RESOURCES = 64


def _check_size(manifest: dict[str, Any]) -> None:
    """WhatIfInputError when the pod has too many containers or resources in a map."""
    spec = manifest.get("spec")
    if not isinstance(spec, dict):
        return
    errors: dict[str, list[str]] = {}
    names: set[object] = set()
    lists = [(key, spec.get(key)) for key in ("containers", "initContainers")]
    counted = [(key, items) for key, items in lists if isinstance(items, list)]
    if sum(len(items) for _, items in counted) > MAX_CONTAINERS:
        errors["pod.spec.containers"] = [f"at most {MAX_CONTAINERS} containers in all"]
    for key, items in counted:
        for index, container in enumerate(items[:MAX_CONTAINERS]):
            resources = container.get("resources") if isinstance(container, dict) else None
            for kind in ("requests", "limits"):
                amounts = resources.get(kind) if isinstance(resources, dict) else None
                if isinstance(amounts, dict) and len(amounts) > MAX_RESOURCES:
                    path = f"pod.spec.{key}.{index}.resources.{kind}"
                    errors[path] = [f"at most {MAX_RESOURCES} resources"]
                elif isinstance(amounts, dict):
                    names.update(amounts)
    if len(names) > MAX_RESOURCES and not errors:
        # each node's verdict may name every resource it is short of: bound them in all
        errors["pod.spec.containers"] = [
            f"at most {MAX_RESOURCES} different resources in all containers ({len(names)})"
        ]
    if errors:
        raise WhatIfInputError(errors)


def pod_from_manifest(manifest: Any) -> PodSpec:
    """A Pod manifest (dict) as the engine's PodSpec; spec.nodeName is ignored."""
    if not isinstance(manifest, dict):
        raise WhatIfInputError({"pod": ["expected a Pod manifest (a JSON/YAML object)"]})
    if manifest.get("kind", "Pod") != "Pod":
        raise WhatIfInputError({"pod": [f"expected kind Pod, got {manifest.get('kind')!r}"]})
    try:
        check_nesting(manifest, refuse_nul=True)
    except (TooDeep, NulCharacter) as error:
        raise WhatIfInputError({"pod": [str(error)]}) from None
    _check_size(manifest)
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


def pod_scheduler_name(manifest: Any, override: str | None = None) -> str:
    """The schedulerName that picks the pod's profile: `override` (the what-if's own
    `scheduler_name`), else the manifest's spec.schedulerName, else the default."""
    if override:
        return override
    spec = manifest.get("spec") if isinstance(manifest, dict) else None
    name = spec.get("schedulerName") if isinstance(spec, dict) else None
    return name if isinstance(name, str) and name else DEFAULT_SCHEDULER_NAME


def check_options(
    *,
    replicas: Any,
    scheduler: Any,
    scoring: Any,
    weights: Any,
    capacity: Any = True,
    scheduler_name: Any = None,
) -> dict[str, list[str]]:
    """Field errors of the non-pod inputs (empty when they are all fine)."""
    errors: dict[str, list[str]] = {}
    if scheduler_name not in (None, "") and (
        not isinstance(scheduler_name, str) or not SCHEDULER_NAME_PATTERN.fullmatch(scheduler_name)
    ):
        errors["scheduler_name"] = [
            "must be a schedulerName: lower-case letters, digits, '-' and '.', at most 253"
        ]
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
    pod: Any,
    *,
    replicas: Any,
    scheduler: Any,
    scoring: Any,
    weights: Any,
    capacity: Any = True,
    scheduler_name: Any = None,
) -> PodSpec:
    """The pod as the engine sees it, or WhatIfInputError with every field at fault."""
    errors = check_options(
        replicas=replicas,
        scheduler=scheduler,
        scoring=scoring,
        weights=weights,
        capacity=capacity,
        scheduler_name=scheduler_name,
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


def admission_json(admission: Admission | None) -> dict[str, Any] | None:
    if admission is None:
        return None
    return {
        "admitted": admission.admitted,
        "reason": admission.reason,
        "checked": admission.checked,
    }


def node_json(verdict: NodeVerdict) -> dict[str, Any]:
    """One node's verdict. `fits` is both stages: the scheduler binds (`scheduler_fits`)
    and the kubelet admits (`admission`, null where the scheduler refuses)."""
    return {
        "node": verdict.node,
        "fits": verdict.fits,
        "score": verdict.score,
        "scheduler_fits": verdict.scheduler_fits,
        "admission": admission_json(verdict.admission),
        "reasons": [reason_text(r) for r in verdict.reasons],
        "numa_zones": list(verdict.numa_zones),
        "cpuset": sorted(verdict.cpuset) if verdict.cpuset is not None else None,
        "annotations": dict(verdict.annotations),
        "system": verdict.system.value,
        "notes": list(verdict.notes),
    }


def judged_by_json(result: WhatIfResult, judge: Judge, scheduler_name: str) -> dict[str, Any]:
    """Which scheduler profile, system and plugin arguments produced the answer."""
    profile = judge.profile
    arguments = {
        system.value: SchedulerProfile(
            scheduler_name, system, nrt=result.configs.nrt, koordinator=result.configs.koordinator
        ).arguments()
        for system in result.systems
    }
    return {
        "system": judge.system.value,
        "scheduler_name": scheduler_name,
        "profile": profile.scheduler_name if profile else None,
        "profile_source": profile.source if profile else None,
        "how": judge.how,
        "arguments": arguments,
    }


def groups_json(result: WhatIfResult) -> list[dict[str, Any]]:
    """Per system: its nodes' own ranking's best, how many fit, how many the kubelet
    rejects, and where the replicas go if the pod is sent to that system."""
    groups = []
    for system in result.systems:
        best = result.best_of(system)
        groups.append(
            {
                "system": system.value,
                "fits": result.fit_count_of(system),
                "rejected_by_kubelet": result.rejected_count_of(system),
                "best": best.node if best is not None else None,
                "placements": placements_json(result, system),
            }
        )
    return groups


def placements_json(result: WhatIfResult, system: Scheduler | None) -> list[dict[str, Any]]:
    """Where each replica goes among `system`'s nodes (None: the one judging system's)."""
    return [
        {
            "replica": p.replica,
            "node": p.node,
            "numa_zones": list(p.numa_zones),
            "cpuset": sorted(p.cpuset) if p.cpuset is not None else None,
            "system": p.system.value if p.system is not None else None,
        }
        for p in result.placements
        if system is None or p.system is system
    ]


def top_placements_json(result: WhatIfResult) -> list[dict[str, Any]]:
    """The replicas' nodes when one system judges the pod; under `auto` (no profile and
    no marks say who sees the pod) none: each group's are in `groups`."""
    if result.scheduler is Scheduler.AUTO and len(result.systems) > 1:
        return []
    return placements_json(result, None)


def capacity_json(result: WhatIfResult) -> dict[str, Any] | None:
    """`null` when not counted (`place(capacity=False)`): never a zero that would read as
    "nothing more fits". Only nodes that pass both stages count."""
    capacity = result.capacity
    if capacity is None:
        return None
    per_system: dict[str, int] = {system.value: 0 for system in result.systems}
    for verdict_system, count in result.capacity_by_system().items():
        per_system[verdict_system.value] = count
    return {"total": capacity.total, "per_node": dict(capacity.per_node), "per_system": per_system}


def result_json(
    result: WhatIfResult,
    *,
    encoded: bool = False,
    judge: Judge | None = None,
    scheduler_name: str = DEFAULT_SCHEDULER_NAME,
) -> dict[str, Any]:
    """The engine's answer in the documented JSON shape (plus `system`/`notes` per node).

    `encoded`: `nodes` comes as one `orjson.Fragment` (the same JSON, built faster)."""
    judge = judge or Judge(result.scheduler, None, f"the {result.scheduler.value} system, as asked")
    nodes: Any = (
        orjson.Fragment(encoded_shared(result.shared_verdicts(), node_json))
        if encoded
        else [node_json(v) for v in result.nodes]
    )
    return {
        "scheduler": result.scheduler.value,
        "judged_by": judged_by_json(result, judge, scheduler_name),
        "scoring": result.configs.nrt.scoring_strategy.value,
        "data_age_seconds": result.data_age_seconds,
        "groups": groups_json(result),
        "nodes": nodes,
        "placements": top_placements_json(result),
        "capacity": capacity_json(result),
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
    scheduler_name: str | None = None,
    profiles: tuple[SchedulerProfile, ...] = (),
) -> dict[str, Any]:
    """Validate everything first, then run `place` (which also answers `evaluate`).

    The pod's schedulerName (`scheduler_name` overrides the manifest's) picks its profile
    among `profiles` (and the built-in ones); `scheduler` other than auto overrides the
    profile's system. `capacity=False` skips counting how many copies each node could
    still take (on a large cluster most of the engine's time for a pod that binds cpus):
    the answer's `capacity` is then null. `encoded`: see `result_json`."""
    options = {"scheduler": scheduler, "scoring": scoring, "weights": weights}
    spec = validated_pod(
        pod, replicas=replicas, capacity=capacity, scheduler_name=scheduler_name, **options
    )
    name = pod_scheduler_name(pod, scheduler_name)
    judge = resolve_judge(spec, name, profiles, Scheduler(scheduler))
    result = place(
        snapshot,
        spec,
        replicas,
        scheduler=judge.system.value,
        scoring=scoring or None,
        weights=weights,
        capacity=capacity,
        profile=judge.profile,
        detailed=settings.WHATIF_DETAILED_NODES,
    )
    return result_json(result, encoded=encoded, judge=judge, scheduler_name=name)


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
    scheduler_name: str | None = None,
) -> dict[str, Any]:
    """What-if against a cluster's mirror; reads only, never writes.

    `use_draft_policies`: judge the nodes as if their saved NodePolicies were applied.
    The cluster's scheduler profiles decide who judges the pod (`run_on_snapshot`).
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
        scheduler_name=scheduler_name,
        profiles=cluster_profiles(cluster),
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
    scheduler_name: Any = None,
    profiles: tuple[SchedulerProfile, ...] = (),
) -> dict[str, Any]:
    """`run_on_snapshot`, remembered per mirror version (`answer_cache`): the same
    question on the same mirror is worked out once (per cluster, with a shared cache).
    Whether capacity is counted, and the scheduler profiles, are part of the question."""
    options = {
        "replicas": replicas,
        "scheduler": scheduler,
        "scoring": scoring,
        "weights": weights,
        "capacity": capacity,
        "scheduler_name": scheduler_name,
    }
    question = {"pod": pod, **options, "profiles": profiles_json(profiles)}
    return remembered_answer(
        snapshot,
        question,
        lambda: run_on_snapshot(snapshot, pod, **options, profiles=profiles, encoded=True),
        fragments=fragments,
    )


def compare_schedulers(
    *, cluster: Cluster, pod: Any, use_draft_policies: bool = False, **options: Any
) -> dict[str, Any]:
    """The same pod under each scheduler, side by side, on one snapshot."""
    snapshot = mirror_snapshot(cluster, use_draft_policies=use_draft_policies)
    profiles = cluster_profiles(cluster)
    return {
        system: answer_on_snapshot(snapshot, pod, scheduler=system, profiles=profiles, **options)
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
