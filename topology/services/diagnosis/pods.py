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
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace
from typing import Any

from scheduler_api.engine import (
    AdmissionExplanation,
    AllocationError,
    NodeSnapshot,
    NodeVerdict,
    PodSpec,
    Reason,
    ReasonCheck,
    Scheduler,
    TopologyHint,
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


def diagnose_pods(facts: ClusterFacts, *, only: str | None = None) -> list[dict[str, Any]]:
    """A diagnosis per Pending or rejected pod (`only`: "namespace/name").

    Replicas of one workload are the same question: the placement part is worked out
    once per pod shape and scheduler name (`shape_key`) and shared by them."""
    wanted = [p for p in facts.pods if (p.pending or p.rejected) and only in (None, p.key)]
    shared: dict[str, dict[str, Any]] = {}
    return [diagnose_pod(facts, pod, shared) for pod in sorted(wanted, key=lambda p: p.key)]


def shape_key(pod: PodFacts) -> str:
    """What the placement of a pod depends on: its spec but its own name and uid (labels,
    annotations, owners and namespace stay: schedulers and reservations read them)."""
    return f"{pod.scheduler_name}|{replace(pod.spec, name='', uid='')!r}"


def diagnose_pod(
    facts: ClusterFacts, pod: PodFacts, shared: dict[str, dict[str, Any]] | None = None
) -> dict[str, Any]:
    """The pod's diagnosis as `manage.py diagnose` prints it (README, "Diagnosis");
    `shared`: placement parts already worked out, by `shape_key`."""
    body = _header(facts, pod)
    key = shape_key(pod)
    if shared is not None and key in shared:
        body.update(shared[key])
    else:
        placed = _judged(facts, pod)
        if shared is not None:
            shared[key] = placed
        body.update(placed)
    if pod.rejected and not body["why"]:
        body["admission"] = _admission_part(facts, pod)
    return body


def _judged(facts: ClusterFacts, pod: PodFacts) -> dict[str, Any]:
    """Who judges the pod and what it finds on every node (name-independent)."""
    body: dict[str, Any] = {}
    judge = resolve_judge(pod.spec, pod.scheduler_name, facts.profiles, Scheduler.AUTO)
    body["scheduler"] = judge.system.value
    body["judged_by"] = {
        "system": judge.system.value,
        "scheduler_name": pod.scheduler_name,
        "profile": judge.profile.scheduler_name if judge.profile else None,
        "how": judge.how,
    }
    try:
        result = place(
            facts.snapshot,
            pod.spec,
            0,
            scheduler=judge.system.value,
            capacity=False,
            profile=judge.profile,
            detailed=0,
        )
    except (AllocationError, ValueError, KeyError) as error:  # a pod the engine cannot judge
        logger.warning("diagnosis of %s: the engine cannot judge it: %s", pod.key, error)
        body["why"] = f"the engine cannot judge this pod: {error}"
        return body
    body.update(_placement_part(facts.snapshot.nodes, pod.spec, list(result.nodes)))
    return body


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


def _placement_part(
    nodes: Iterable[NodeSnapshot], spec: PodSpec, verdicts: list[NodeVerdict]
) -> dict[str, Any]:
    fitting = [v for v in verdicts if v.fits]
    by_system: dict[str, int] = {}
    for verdict in fitting:
        by_system[verdict.system.value] = by_system.get(verdict.system.value, 0) + 1
    refused = [v for v in verdicts if not v.fits]
    snapshots = {node.name: node for node in nodes}
    request = {r: a for r, a in pod_request(spec).items() if a > 0 and r not in UNALIGNED}
    misses = [_miss(snapshots[v.node], v, request) for v in refused if v.node in snapshots]
    kept = [m for m in misses if m is not None]
    return {
        "fits_now": len(fitting),
        "fits_by_system": by_system,
        "fits_on": [v.node for v in fitting[:FITS_SHOWN]],
        "refusals": refusals_by_check(refused),
        "nearest": [m.as_json() for m in sorted(kept, key=lambda m: m.distance)[:NEAREST]]
        if not fitting
        else [],
        "alignment_only": not fitting and any(m.alignment for m in kept),
    }


def refusals_by_check(refused: Iterable[NodeVerdict]) -> list[dict[str, Any]]:
    """The checks that refuse nodes, most nodes first, each with one example: the
    what-if page's "Why nodes refuse it" (`reasons_by_check`), every check kept."""
    texts = ((v.node, [reason_text(r) for r in v.reasons or (_unexplained(),)]) for v in refused)
    return [
        {"check": r.check, "nodes": r.nodes, "example": r.example[:EXAMPLE_LIMIT]}
        for r in reasons_by_check(texts)
    ]


def _unexplained() -> Reason:
    return Reason(ReasonCheck.SCHEDULER_ERROR, message="refused without a reason")


@dataclass(frozen=True)
class Miss:
    """One refused node and the smallest change that would let the pod fit there."""

    node: str
    change: str
    alignment: bool  # the node has the amounts, but not in one NUMA zone
    distance: float  # the shortfall as a share of the request, summed over resources

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
        parts = [
            f"{more(r, s)} free on node {node.name}; it has "
            f"{human_amount(r, max(request[r] - s, 0))} free, the pod needs "
            f"{human_amount(r, request[r])}"
            for r, s in short.items()
        ]
        return Miss(node.name, "needs " + "; ".join(parts), False, _distance(short, request))
    if not _refused_by_numa(verdict):
        return None
    zone_short = _zone_shortfall(node, request)
    if not zone_short:
        return None
    best, missing = zone_short
    parts = [
        f"{more(r, s)} free on one NUMA zone of node {node.name}; its best zone has "
        f"{human_amount(r, best[r])} free, the pod needs {human_amount(r, request[r])}"
        for r, s in missing.items()
    ]
    return Miss(node.name, "needs " + "; ".join(parts), True, _distance(missing, request))


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
