"""Why a Pending pod does not bind, and why the kubelet rejected one (issue 30 §2).

Each pod is judged as the what-if judges a new one (`place` with no replicas, on the
same snapshot and with the same scheduler profiles), by the profile its
`spec.schedulerName` picks. What it adds is reading the refusals the way an operator
needs them: grouped by check, the nearest misses stated as the change that would let
the pod fit, NUMA-alignment refusals (the node has the amount, not in one zone) told
apart from plain capacity, and for a pod the kubelet refused with TopologyAffinityError
its Topology Manager admission replayed provider by provider.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from scheduler_api.engine import (
    AdmissionExplanation,
    AllocationError,
    ClusterSnapshot,
    Judge,
    NodeSnapshot,
    NodeVerdict,
    PodSpec,
    Reason,
    ReasonCheck,
    Scheduler,
    TopologyHint,
    WhatIfResult,
    explain_admission,
    human_amount,
    place,
    pod_request,
    reason_text,
    resolve_judge,
)
from topology.services.diagnosis.facts import ClusterFacts, EventFacts, PodFacts
from topology.services.whatif.page import reasons_by_check

logger = logging.getLogger(__name__)
NEAREST = 3  # nearest misses shown per pod
FITS_SHOWN = 5  # nodes named where a pod fits now, best first
EXAMPLE_LIMIT = 300
# Requests a NUMA zone holds (the others are node-level only).
ZONE_ALIGNED = ("cpu", "memory")
UNALIGNED = frozenset({"ephemeral-storage", "pods", "storage"})


JudgedPart = Callable[[ClusterFacts, PodFacts], dict[str, Any]]


def diagnose_pods(
    facts: ClusterFacts, *, only: str | None = None, judged: JudgedPart | None = None
) -> list[dict[str, Any]]:
    """A diagnosis per Pending or rejected pod (`only`: "namespace/name").

    Replicas of one workload are the same question: the placement part is worked out
    once per pod shape and scheduler name (`shape_key`) and shared by them. `judged`
    works that part out (default: `judged_part`, the reference; `incremental` passes its
    own, which keeps what it found on the nodes that did not change)."""
    wanted = [p for p in facts.pods if (p.pending or p.rejected) and only in (None, p.key)]
    shared: dict[str, dict[str, Any]] = {}
    return [
        diagnose_pod(facts, pod, shared, judged=judged)
        for pod in sorted(wanted, key=lambda p: p.key)
    ]


def shape_key(pod: PodFacts) -> str:
    """What the placement of a pod depends on: its spec but its own name and uid (labels,
    annotations, owners and namespace stay: schedulers and reservations read them)."""
    return f"{pod.scheduler_name}|{replace(pod.spec, name='', uid='')!r}"


def diagnose_pod(
    facts: ClusterFacts,
    pod: PodFacts,
    shared: dict[str, dict[str, Any]] | None = None,
    *,
    judged: JudgedPart | None = None,
) -> dict[str, Any]:
    """The pod's diagnosis as `manage.py diagnose` prints it (README, "Diagnosis");
    `shared`: placement parts already worked out, by `shape_key`."""
    body = _header(facts, pod)
    key = shape_key(pod)
    if shared is not None and key in shared:
        body.update(shared[key])
    else:
        placed = (judged or judged_part)(facts, pod)
        if shared is not None:
            shared[key] = placed
        body.update(placed)
    if pod.rejected and not body["why"]:
        body["admission"] = _admission_part(facts, pod)
    return body


def judged_part(facts: ClusterFacts, pod: PodFacts) -> dict[str, Any]:
    """Who judges the pod and what it finds on every node (name-independent): every
    node's verdict, each read as a `NodeOutcome`, summed up in ranking order."""
    judge = pod_judge(facts, pod)
    body = judged_by(judge, pod)
    try:
        result = place_pod(facts.snapshot, pod, judge)
    except PLACE_ERRORS as error:
        return body | cannot_judge(pod, error)
    request = placement_request(pod.spec)
    nodes = {node.name: node for node in facts.snapshot.nodes}
    outcomes = [node_outcome(nodes.get(v.node), v, request) for v in result.nodes]
    return body | placement_summary(outcomes)


PLACE_ERRORS = (AllocationError, ValueError, KeyError)  # a pod the engine cannot judge


def pod_judge(facts: ClusterFacts, pod: PodFacts) -> Judge:
    return resolve_judge(pod.spec, pod.scheduler_name, facts.profiles, Scheduler.AUTO)


def judged_by(judge: Judge, pod: PodFacts) -> dict[str, Any]:
    return {
        "scheduler": judge.system.value,
        "judged_by": {
            "system": judge.system.value,
            "scheduler_name": pod.scheduler_name,
            "profile": judge.profile.scheduler_name if judge.profile else None,
            "how": judge.how,
        },
    }


def place_pod(snapshot: ClusterSnapshot, pod: PodFacts, judge: Judge) -> WhatIfResult:
    """The what-if of the pod as its judge sees it: no replicas, no capacity count."""
    return place(
        snapshot,
        pod.spec,
        0,
        scheduler=judge.system.value,
        capacity=False,
        profile=judge.profile,
        detailed=0,
    )


def cannot_judge(pod: PodFacts, error: Exception) -> dict[str, Any]:
    logger.warning("diagnosis of %s: the engine cannot judge it: %s", pod.key, error)
    return {"why": f"the engine cannot judge this pod: {error}"}


def _header(facts: ClusterFacts, pod: PodFacts) -> dict[str, Any]:
    stale = (
        facts.data_age_seconds is not None and facts.data_age_seconds > facts.stale_after_seconds
    )
    status = pod.status
    scheduled = status.get("scheduled") or {}
    reason = status.get("reason") or scheduled.get("reason") or ""
    events = facts.events_of(pod)
    if events and not reason:
        reason = max(events, key=_event_order).reason
    return {
        "namespace": pod.namespace,
        "name": pod.name,
        "state": "rejected" if pod.rejected else "pending",
        "node": pod.node_name or None,
        "reason": reason,
        "message": status.get("message") or scheduled.get("message") or "",
        "created_at": pod.created_at.isoformat() if pod.created_at else None,
        "scheduler": "",
        "fits_now": 0,
        "fits_by_system": {},
        "fits_on": [],
        "refusals": [],
        "nearest": [],
        "alignment_only": False,
        "admission": None,
        "events": [_event_json(e) for e in sorted(events, key=_event_order, reverse=True)],
        "stale_data": stale,
        "data_age_seconds": facts.data_age_seconds,
        "why": "",
    }


def _event_order(event: EventFacts) -> tuple[float, str]:
    return (event.last_seen.timestamp() if event.last_seen else 0.0, event.reason)


def _event_json(event: EventFacts) -> dict[str, Any]:
    return {
        "reason": event.reason,
        "message": event.message,
        "count": event.count,
        "last_seen": event.last_seen.isoformat() if event.last_seen else None,
    }


def placement_request(spec: PodSpec) -> dict[str, int]:
    """The pod's requests that a node or a NUMA zone must hold (node-level-only ones out)."""
    return {r: a for r, a in pod_request(spec).items() if a > 0 and r not in UNALIGNED}


@dataclass(frozen=True)
class NodeOutcome:
    """What one node's verdict adds to a diagnosis: it depends on that node alone (its
    snapshot, its reservations, the pod and the judge), never on the other nodes."""

    node: str
    fits: bool
    system: str
    reasons: tuple[str, ...]  # the refusal's reason texts; () when it fits
    miss: Miss | None  # the change that would let the pod fit (refused nodes)
    scheduler_fits: bool = False  # the scheduler would bind it (the kubelet may refuse)
    score: int | None = None  # its score where it fits (scores are per node)

    @property
    def rank_key(self) -> tuple[str, bool, int | None, bool]:
        """What places the node in the engine's ranking, but its name (`Judgement.order`:
        by system, fitting by score, then refused by the scheduler or the kubelet)."""
        return (self.system, self.fits, self.score if self.fits else None, self.scheduler_fits)


def node_outcome(
    node: NodeSnapshot | None, verdict: NodeVerdict, request: Mapping[str, int]
) -> NodeOutcome:
    if verdict.fits:
        return NodeOutcome(verdict.node, True, verdict.system.value, (), None, True, verdict.score)
    reasons = tuple(reason_text(r) for r in verdict.reasons or (_unexplained(),))
    miss = _miss(node, verdict, request) if node is not None else None
    system = verdict.system.value
    return NodeOutcome(verdict.node, False, system, reasons, miss, verdict.scheduler_fits)


def placement_summary(outcomes: Sequence[NodeOutcome]) -> dict[str, Any]:
    """The placement part of a diagnosis from every node's outcome, in ranking order
    (the first refused node of a check is its example; ties among misses keep it)."""
    fitting = [o for o in outcomes if o.fits]
    by_system: dict[str, int] = {}
    for outcome in fitting:
        by_system[outcome.system] = by_system.get(outcome.system, 0) + 1
    refused = [o for o in outcomes if not o.fits]
    misses = [o.miss for o in refused if o.miss is not None]
    return {
        "fits_now": len(fitting),
        "fits_by_system": by_system,
        "fits_on": [o.node for o in fitting[:FITS_SHOWN]],
        "refusals": refusals_by_check((o.node, o.reasons) for o in refused),
        "nearest": [m.as_json() for m in sorted(misses, key=lambda m: m.distance)[:NEAREST]]
        if not fitting
        else [],
        "alignment_only": not fitting and any(m.alignment for m in misses),
    }


def refusals_by_check(refused: Iterable[tuple[str, Iterable[str]]]) -> list[dict[str, Any]]:
    """The checks that refuse nodes, most nodes first, each with one example: the
    what-if page's "Why nodes refuse it" (`reasons_by_check`), every check kept.
    `refused`: (node, its reason texts) in ranking order."""
    return [
        {"check": r.check, "nodes": r.nodes, "example": r.example[:EXAMPLE_LIMIT]}
        for r in reasons_by_check(refused)
    ]


def _unexplained() -> Reason:
    return Reason(ReasonCheck.SCHEDULER_ERROR, message="refused without a reason")


@dataclass(frozen=True)
class Miss:
    """One refused node and the smallest change that would let the pod fit there. The
    change is kept as numbers and said in words only when shown (`change`): a pod is
    refused by thousands of nodes, and only the nearest few are shown."""

    node: str
    shortfalls: tuple[tuple[str, int, int, int], ...]  # (resource, short, free, request)
    alignment: bool  # the node has the amounts, but not in one NUMA zone
    distance: float  # the shortfall as a share of the request, summed over resources

    @property
    def change(self) -> str:
        if self.alignment:
            where, has = f"one NUMA zone of node {self.node}", "its best zone has"
        else:
            where, has = f"node {self.node}", "it has"
        return "needs " + "; ".join(
            f"{more(r, short)} free on {where}; {has} {human_amount(r, free)} free, "
            f"the pod needs {human_amount(r, wanted)}"
            for r, short, free, wanted in self.shortfalls
        )

    def as_json(self) -> dict[str, Any]:
        return {"node": self.node, "change": self.change, "alignment": self.alignment}


def _miss(node: NodeSnapshot, verdict: NodeVerdict, request: Mapping[str, int]) -> Miss | None:
    """The change that would let the pod fit on `node`: free capacity on the node when
    it lacks the amount, else free capacity in one NUMA zone. None when the refusal is
    not about amounts (a cordoned node, a policy mismatch, a missing NRT, ...)."""
    if node.unschedulable or not request:
        return None
    short = _node_shortfall(node, request)
    if short:
        parts = tuple((r, s, max(request[r] - s, 0), request[r]) for r, s in short.items())
        return Miss(node.name, parts, False, _distance(short, request))
    if not _refused_by_numa(verdict):
        return None
    zone_short = _zone_shortfall(node, request)
    if not zone_short:
        return None
    best, missing = zone_short
    parts = tuple((r, s, best[r], request[r]) for r, s in missing.items())
    return Miss(node.name, parts, True, _distance(missing, request))


def more(resource: str, amount: int) -> str:
    """ "2 more CPUs", "1.5Gi more memory", "1 more nvidia.com/gpu"."""
    if resource == "cpu":
        return f"{human_amount(resource, amount).replace(' CPU', ' more CPU')}"
    return f"{human_amount(resource, amount)} more {resource}"


# The checks that refuse a pod for where its amounts would sit, not for the amounts.
NUMA_CHECKS = frozenset(
    {
        ReasonCheck.SINGLE_NUMA_NODE,
        ReasonCheck.INSUFFICIENT_NUMA,
        ReasonCheck.UNSATISFIED_NUMA,
        ReasonCheck.UNALIGNED_HINT,
        ReasonCheck.INSUFFICIENT_CPUS,
        ReasonCheck.KUBELET_ADMISSION,
        ReasonCheck.SMT_ALIGNMENT,
    }
)


def _refused_by_numa(verdict: NodeVerdict) -> bool:
    return bool(verdict.reasons) and all(r.check in NUMA_CHECKS for r in verdict.reasons)


def _node_shortfall(node: NodeSnapshot, request: Mapping[str, int]) -> dict[str, int]:
    """Per resource, how much more must be free on the node (NodeResourcesFit's view)."""
    short = {}
    for resource, amount in request.items():
        free = node.allocatable.get(resource, 0) - node.requested.get(resource, 0)
        if amount > free:
            short[resource] = amount - max(free, 0)
    return short


def _zone_shortfall(
    node: NodeSnapshot, request: Mapping[str, int]
) -> tuple[dict[str, int], dict[str, int]] | None:
    """(best zone's available, shortfall) per zone-held resource, for the zone that
    comes closest; None when the node publishes no zone amounts for the request."""
    best: tuple[float, dict[str, int], dict[str, int]] | None = None
    for zone in node.zones:
        if zone.zone_type != "Node":
            continue
        held = {r: zone.resources[r].available for r in request if r in zone.resources}
        if not held:
            continue
        missing = {r: request[r] - a for r, a in held.items() if request[r] > a}
        distance = _distance(missing, request)
        if best is None or distance < best[0]:
            best = (distance, held, missing)
    if best is None or not best[2]:
        return None
    return best[1], best[2]


def _distance(short: Mapping[str, int], request: Mapping[str, int]) -> float:
    return sum(s / request[r] for r, s in short.items() if request.get(r))


def _admission_part(facts: ClusterFacts, pod: PodFacts) -> dict[str, Any]:
    node = next((n for n in facts.snapshot.nodes if n.name == pod.node_name), None)
    if node is None:
        return {
            "node": pod.node_name,
            "policy": None,
            "providers": [],
            "why": f"node {pod.node_name} is not in the mirror",
        }
    return admission_json(node.name, explain_admission(node, pod.spec))


def admission_json(node: str, explained: AdmissionExplanation) -> dict[str, Any]:
    return {
        "node": node,
        "policy": explained.policy.value,
        "scope": explained.scope.value,
        "admitted_now": explained.admitted,
        "blocking": list(explained.blocking),
        "providers": [
            {
                "resource": p.resource,
                "source": p.source,
                "hints": [hint_json(h) for h in p.hints],
                "accepted": p.accepted,
            }
            for p in explained.providers
        ],
        "notes": list(explained.notes),
    }


def hint_json(hint: TopologyHint) -> dict[str, Any]:
    return {
        "numa": sorted(hint.numa) if hint.numa is not None else None,
        "preferred": hint.preferred,
    }
