"""What-if placement as a service: take a Pod manifest, run the engine, answer in JSON.

The one place that turns user input into engine calls and engine results into the
JSON shape shared by `manage.py whatif`, the REST API and the dashboard. Bad input
raises WhatIfInputError with errors per field; a pod that fits nowhere is not an
error, it is an answer.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
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
    WhatIfResult,
    place,
    pod_level_note,
    pod_level_resources_set,
    reason_text,
    resolve_judge,
)
from topology.adapters.drafts import stored_drafts, with_drafts
from topology.models import Cluster
from topology.selectors.clusters import data_age
from topology.selectors.dra import nodes_with_dra_devices
from topology.services.whatif.answer_cache import remembered_answer
from topology.services.whatif.encoding import RuleSets, encoded_shared
from topology.services.whatif.question import (
    COMPARE_ALL,
    DEFAULT_POD_NAME,
    MAX_REPLICAS,
    SCHEDULER_NAME_PATTERN,
    SCHEDULERS,
    SCORING_STRATEGIES,
    WhatIfInputError,
    WhatIfQuestion,
    check_options,
    parse_weights,
    pod_from_manifest,
    pod_scheduler_name,
    validated_pod,
)
from topology.services.whatif.scheduler_profiles import cluster_profiles, profiles_json
from topology.services.whatif.snapshot_cache import cached_cluster_snapshot


def admission_json(admission: Admission | None) -> dict[str, Any] | None:
    if admission is None:
        return None
    return {
        "admitted": admission.admitted,
        "reason": admission.reason,
        "checked": admission.checked,
        "memory_numa_zones": (
            sorted(admission.memory_numa) if admission.memory_numa is not None else None
        ),
    }


def node_json(verdict: NodeVerdict, rules: str = "") -> dict[str, Any]:
    """One node's verdict. `fits` is both stages: the scheduler binds (`scheduler_fits`)
    and the kubelet admits (`admission`, null where the scheduler refuses). `rules`: the
    id, in the answer's `rules`, of the rules that judged the node (`RuleSets`)."""
    return {
        "node": verdict.node,
        "fits": verdict.fits,
        "score": verdict.score,
        "rules": rules,
        "scheduler_fits": verdict.scheduler_fits,
        "admission": admission_json(verdict.admission),
        "reasons": [reason_text(r) for r in verdict.reasons],
        "numa_zones": list(verdict.numa_zones),
        "cpuset": sorted(verdict.cpuset) if verdict.cpuset is not None else None,
        "annotations": dict(verdict.annotations),
        "system": verdict.system.value,
        "notes": list(verdict.notes),
    }


def judged_by_json(
    result: WhatIfResult,
    judge: Judge,
    scheduler_name: str,
    not_judged: Sequence[str] = (),
    pod_level: Sequence[str] = (),
) -> dict[str, Any]:
    """Which scheduler profile, system and plugin arguments produced the answer, which
    of the pod's placement constraints it did not judge, and how each system read the
    pod's pod-level resources (`pod_level`, empty when it sets none: `pod_level_rules`)."""
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
        "not_judged": list(not_judged),
        "pod_level_resources": list(pod_level),
    }


def pod_level_rules(result: WhatIfResult, pod: PodSpec) -> list[str]:
    """For a pod that sets spec.resources, one sentence per system judging it: whether
    that scheduler reads them as the pod's requests or sums the containers."""
    if not pod_level_resources_set(pod):
        return []
    return [pod_level_note(system) for system in result.systems]


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
    not_judged: Sequence[str] = (),
    pod_level: Sequence[str] = (),
) -> dict[str, Any]:
    """The engine's answer in the documented JSON shape (plus `system`/`notes` per node).

    `encoded`: `nodes` comes as one `orjson.Fragment` (the same JSON, built faster)."""
    judge = judge or Judge(result.scheduler, None, f"the {result.scheduler.value} system, as asked")
    rule_sets = RuleSets(*result.rule_codes(), result.row_of)
    nodes: Any = (
        orjson.Fragment(encoded_shared(result.shared_verdicts(), node_json, rule_sets))
        if encoded
        else [node_json(v, rule_sets.id_of(v.node)) for v in result.nodes]
    )
    return {
        "scheduler": result.scheduler.value,
        "judged_by": judged_by_json(result, judge, scheduler_name, not_judged, pod_level),
        "scoring": result.configs.nrt.scoring_strategy.value,
        "data_age_seconds": result.data_age_seconds,
        "groups": groups_json(result),
        "nodes": nodes,
        "rules": rule_sets.as_json(),
        "placements": top_placements_json(result),
        "capacity": capacity_json(result),
    }


def judge_question(
    snapshot: ClusterSnapshot,
    question: WhatIfQuestion,
    *,
    profiles: tuple[SchedulerProfile, ...] = (),
    encoded: bool = False,
) -> dict[str, Any]:
    """Run `place` (which also answers `evaluate`) for one scheduler's question.

    The pod's schedulerName picks its profile among `profiles` (and the built-in ones);
    `question.scheduler` other than auto overrides the profile's system. Without
    `question.capacity` the copies each node could still take are not counted (on a
    large cluster most of the engine's time for a pod that binds cpus): the answer's
    `capacity` is then null. `encoded`: see `result_json`."""
    if question.compares_schedulers:
        raise ValueError("a comparison of schedulers is answered by compare_schedulers")
    name = question.pod_scheduler_name
    judge = resolve_judge(question.spec, name, profiles, Scheduler(question.scheduler))
    result = place(
        snapshot,
        question.spec,
        question.replicas,
        scheduler=judge.system.value,
        scoring=question.scoring,
        weights=question.weights,
        capacity=question.capacity,
        profile=judge.profile,
        detailed=settings.WHATIF_DETAILED_NODES,
    )
    return result_json(
        result,
        encoded=encoded,
        judge=judge,
        scheduler_name=name,
        not_judged=question.not_judged,
        pod_level=pod_level_rules(result, question.spec),
    )


def remembered_judgement(
    snapshot: ClusterSnapshot,
    question: WhatIfQuestion,
    *,
    profiles: tuple[SchedulerProfile, ...] = (),
    fragments: bool = False,
) -> dict[str, Any]:
    """`judge_question`, remembered per mirror version (`answer_cache`): the same
    question on the same mirror is worked out once (per cluster, with a shared cache).
    Whether capacity is counted, and the scheduler profiles, are part of the question."""
    key = {**question.cache_key(), "profiles": profiles_json(profiles)}
    return remembered_answer(
        snapshot,
        key,
        lambda: judge_question(snapshot, question, profiles=profiles, encoded=True),
        fragments=fragments,
    )


def ask(cluster: Cluster, question: WhatIfQuestion, *, fragments: bool = False) -> dict[str, Any]:
    """The answer on a cluster's mirror; reads only, never writes.

    A comparison (`scheduler` all) maps each scheduler to its answer, all on one snapshot.
    The cluster's scheduler profiles decide who judges the pod (`judge_question`). A
    question asked before on the same mirror version is answered from memory; with
    `fragments` its large parts may come encoded (`answer_cache`), for orjson to render."""
    snapshot = mirror_snapshot(cluster, use_draft_policies=question.use_draft_policies)
    profiles = cluster_profiles(cluster)
    question = question.with_dra_nodes(lambda: nodes_with_dra_devices(cluster))
    if question.compares_schedulers:
        return {
            system: remembered_judgement(snapshot, question.under(system), profiles=profiles)
            for system in SCHEDULERS
            if system != Scheduler.AUTO
        }
    return remembered_judgement(snapshot, question, profiles=profiles, fragments=fragments)


# The keyword forms below are for callers holding loose values (tests, benchmarks):
# each builds the question once and runs it as above.


def run_on_snapshot(
    snapshot: ClusterSnapshot,
    pod: Any,
    *,
    encoded: bool = False,
    profiles: tuple[SchedulerProfile, ...] = (),
    **options: Any,
) -> dict[str, Any]:
    """`judge_question` on a question built from `pod` and `options`."""
    question = WhatIfQuestion.from_inputs(pod, **options)
    return judge_question(snapshot, question, profiles=profiles, encoded=encoded)


def run_whatif(
    *, cluster: Cluster, pod: Any, fragments: bool = False, **options: Any
) -> dict[str, Any]:
    """`ask` on a question built from `pod` and `options` (WhatIfQuestion.from_inputs)."""
    return ask(cluster, WhatIfQuestion.from_inputs(pod, **options), fragments=fragments)


def answer_on_snapshot(
    snapshot: ClusterSnapshot,
    pod: Any,
    *,
    fragments: bool = False,
    profiles: tuple[SchedulerProfile, ...] = (),
    **options: Any,
) -> dict[str, Any]:
    """`remembered_judgement` on a question built from `pod` and `options`."""
    question = WhatIfQuestion.from_inputs(pod, **options)
    return remembered_judgement(snapshot, question, profiles=profiles, fragments=fragments)


def compare_schedulers(*, cluster: Cluster, pod: Any, **options: Any) -> dict[str, Any]:
    """The same pod under each scheduler, side by side, on one snapshot."""
    options.pop("scheduler", None)
    return ask(cluster, WhatIfQuestion.from_inputs(pod, scheduler=COMPARE_ALL, **options))


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
    "COMPARE_ALL",
    "DEFAULT_POD_NAME",
    "MAX_REPLICAS",
    "SCHEDULER_NAME_PATTERN",
    "SCHEDULERS",
    "WhatIfQuestion",
    "ask",
    "judge_question",
    "pod_scheduler_name",
    "remembered_judgement",
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
