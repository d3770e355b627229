"""Replay one running pod: the node as it was just before the pod arrived, judged again.

For a pod whose system publishes where it landed (Koordinator's resource-status and
pod-cpu-allocs, Crane's topology-result, kubelet-published allocations), the node is
rebuilt without the pod and without the node's pods created after it (their
`creationTimestamp`), then the pod's own judge (its scheduler profile, as the what-if
resolves it) places it there alone. That rebuilt node is an approximation of what the
scheduler saw: pods that ran then and have gone since are not put back, and a pod
whose per-NUMA amounts are not published cannot be given back to its NUMA zones.

Verdicts:
- `agree`: the node is feasible for the pod and the engine chooses the same NUMA zones
  and, where both are known, the same cpuset;
- `differs`: `node-infeasible`, `zones`, `cpuset` (as many as apply);
- `not-judgeable`: no placement published, unknown scheduler, data missing (the node
  is not mirrored, or the pod's requests cannot be judged).

Plain values, no Django: `audit_pods` reads `ClusterFacts` (from the mirror or a dump).
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace

from scheduler_api.engine import (
    ClusterSnapshot,
    Flavour,
    Judge,
    NodeSnapshot,
    ResourceAmounts,
    Scheduler,
    Zone,
    format_cpuset,
    place,
    pod_request,
    resolve_judge,
    snapshot,
)
from topology.services.diagnosis.facts import ClusterFacts, PodFacts
from topology.services.diagnosis.pods import PLACE_ERRORS

logger = logging.getLogger(__name__)

AGREE, DIFFERS, NOT_JUDGEABLE = "agree", "differs", "not-judgeable"
NODE_INFEASIBLE, ZONES, CPUSET = "node-infeasible", "zones", "cpuset"

NO_PLACEMENT = "no placement published: its system records no NUMA zones or cpuset for it"
UNKNOWN_SCHEDULER = "unknown scheduler"
APPROXIMATION = (
    "the node rebuilt as just before the pod arrived (pods created after it removed, by "
    "creationTimestamp): an approximation of the scheduler's view"
)
# NRT flavours whose zones' `available` counts the node's pods: a removed pod's
# published per-NUMA amounts go back to them (Koordinator and Crane keep their own books
# in the pods' annotations, which removing the pods already undoes)
ZONES_COUNT_PODS = frozenset({Flavour.UPSTREAM_V1ALPHA2, Flavour.UPSTREAM_V1ALPHA1})


@dataclass(frozen=True, slots=True)
class Placed:
    """Where a pod is (or would be): its NUMA zones, and its cpuset when known."""

    numa_zones: tuple[int, ...] = ()
    cpuset: frozenset[int] | None = None


@dataclass(frozen=True, slots=True)
class PodAudit:
    namespace: str
    name: str
    uid: str
    node: str
    system: str
    verdict: str
    differs: tuple[str, ...] = ()
    real: Placed = field(default_factory=Placed)
    engine_feasible: bool = False
    engine: Placed = field(default_factory=Placed)
    why: str = ""

    def as_json(self) -> dict[str, object]:
        """The CLI's and the API's shape (issue 32)."""
        return {
            "namespace": self.namespace,
            "name": self.name,
            "node": self.node,
            "system": self.system,
            "verdict": self.verdict,
            "differs": list(self.differs),
            "real": _placed_json(self.real),
            "engine": {"feasible": self.engine_feasible, **_placed_json(self.engine)},
            "why": self.why,
        }


def _placed_json(placed: Placed) -> dict[str, object]:
    cpuset = None if placed.cpuset is None else sorted(placed.cpuset)
    return {"numa_zones": list(placed.numa_zones), "cpuset": cpuset}


# --- the real placement ----------------------------------------------------------------


def numa_of_cpus(node: NodeSnapshot, cpus: Iterable[int]) -> tuple[int, ...]:
    """The NUMA nodes of `cpus` as the node's CPU table says (none when not published)."""
    numa = {cpu: zone for cpu, _core, _socket, zone in node.cpus}
    return tuple(sorted({numa[cpu] for cpu in cpus if cpu in numa}))


def real_placement(node: NodeSnapshot, uid: str) -> Placed | None:
    """Where the pod `uid` landed, as its system publishes it; None when nothing is."""
    held = [a for a in node.allocations if a.uid == uid]
    zones = {
        numa
        for a in held
        for numa, amounts in a.numa_resources.items()
        if numa >= 0 and any(amount > 0 for amount in amounts.values())
    }
    cpus = frozenset().union(*(a.cpuset for a in held)) if held else frozenset()
    if not zones and cpus:
        zones = set(numa_of_cpus(node, cpus))
    if not zones and not cpus:
        return None
    return Placed(tuple(sorted(zones)), cpus or None)


# --- the node before the pod -----------------------------------------------------------


def later_pods(pod: PodFacts, on_node: Sequence[PodFacts]) -> list[PodFacts]:
    """The node's pods created after `pod` (unknown creation times are kept: older)."""
    if pod.created_at is None:
        return []
    return [
        other
        for other in on_node
        if other.uid != pod.uid and other.created_at is not None
        and other.created_at > pod.created_at
    ]  # fmt: skip


def node_before(node: NodeSnapshot, removed: Sequence[PodFacts]) -> NodeSnapshot:
    """`node` without the `removed` pods: their allocations gone, their requests off the
    node's, and (on NRT flavours whose zones count pods) their published per-NUMA
    amounts given back to their zones, up to each zone's allocatable."""
    uids = {pod.uid for pod in removed}
    gone = [a for a in node.allocations if a.uid in uids]
    requested = dict(node.requested)
    for pod in removed:
        for name, amount in pod_request(pod.spec).items():
            requested[name] = max(requested.get(name, 0) - amount, 0)
    if "pods" in requested:
        requested["pods"] = max(requested["pods"] - len(removed), 0)
    zones = node.zones
    if node.flavour in ZONES_COUNT_PODS:
        credit: dict[int, dict[str, int]] = {}
        for allocation in gone:
            for numa, amounts in allocation.numa_resources.items():
                into = credit.setdefault(numa, {})
                for name, amount in amounts.items():
                    into[name] = into.get(name, 0) + amount
        zones = tuple(_credited(zone, credit.get(zone.numa_id, {})) for zone in node.zones)
    kept = tuple(a for a in node.allocations if a.uid not in uids)
    return replace(node, allocations=kept, requested=requested, zones=zones)


def _credited(zone: Zone, credit: Mapping[str, int]) -> Zone:
    if not credit:
        return zone
    resources = dict(zone.resources)
    for name, amount in credit.items():
        amounts = resources.get(name)
        if amounts is not None:
            available = min(amounts.available + amount, amounts.allocatable)
            resources[name] = ResourceAmounts(amounts.capacity, amounts.allocatable, available)
    return replace(zone, resources=resources)


# --- one pod ---------------------------------------------------------------------------


def audit_pod(facts: ClusterFacts, pod: PodFacts, nodes: Mapping[str, NodeSnapshot]) -> PodAudit:
    """The pod's verdict (see the module docstring)."""
    base = {"namespace": pod.namespace, "name": pod.name, "uid": pod.uid, "node": pod.node_name}
    node = nodes.get(pod.node_name)
    if node is None:
        why = f"data missing: node {pod.node_name!r} is not in the mirror"
        return PodAudit(**base, system="", verdict=NOT_JUDGEABLE, why=why)
    judge = resolve_judge(pod.spec, pod.scheduler_name, facts.profiles)
    system = judge.system if judge.system is not Scheduler.AUTO else None
    real = real_placement(node, pod.uid)
    if real is None:
        name = system.value if system else ""
        return PodAudit(**base, system=name, verdict=NOT_JUDGEABLE, why=NO_PLACEMENT)
    if system is None:
        why = f"{UNKNOWN_SCHEDULER}: {judge.how}"
        return PodAudit(**base, system="", verdict=NOT_JUDGEABLE, real=real, why=why)
    removed = [pod, *later_pods(pod, facts.live_pods_by_node.get(node.name, []))]
    before = node_before(node, removed)
    return _judged(facts, pod, before, judge, real, base)


def _judged(
    facts: ClusterFacts,
    pod: PodFacts,
    before: NodeSnapshot,
    judge: Judge,
    real: Placed,
    base: Mapping[str, str],
) -> PodAudit:
    system = judge.system
    one_node = ClusterSnapshot((before,), facts.reservations_by_node.get(before.name, ()))
    try:
        # no replica bound: the node's verdict, allocated in detail (its zones and cpuset)
        result = place(one_node, pod.spec, 0, scheduler=system.value, capacity=False,
                       profile=judge.profile, detailed=1)  # fmt: skip
        verdict = result.nodes[0]
    except PLACE_ERRORS as error:
        logger.warning("audit of %s: the engine cannot judge it: %s", pod.key, error)
        why = f"data missing: the engine cannot judge this pod: {error}"
        return PodAudit(**base, system=system.value, verdict=NOT_JUDGEABLE, real=real, why=why)
    if not verdict.fits:
        reasons = "; ".join(r.message or str(r.check) for r in verdict.reasons)
        why = f"the engine finds the node infeasible: {reasons or 'no reason given'}"
        return PodAudit(**base, system=system.value, verdict=DIFFERS, differs=(NODE_INFEASIBLE,),
                        real=real, why=_with_note(why, pod))  # fmt: skip
    engine = _engine_placed(before, verdict.numa_zones, verdict.cpuset)
    differs = _differences(real, engine)
    if not differs:
        return PodAudit(**base, system=system.value, verdict=AGREE, real=real,
                        engine_feasible=True, engine=engine)  # fmt: skip
    why = f"it holds {_text(real)}; the engine would give it {_text(engine)}"
    return PodAudit(**base, system=system.value, verdict=DIFFERS, differs=differs, real=real,
                    engine_feasible=True, engine=engine, why=_with_note(why, pod))  # fmt: skip


def _with_note(why: str, pod: PodFacts) -> str:
    """`why`, and who placed the pod when it says so (`snapshot.ANN_PLACEMENT_NOTE`)."""
    note = pod.spec.annotations.get(snapshot.ANN_PLACEMENT_NOTE, "")
    return f"{why}; placement note on the pod: {note}" if note else why


def _text(placed: Placed) -> str:
    zones = ", ".join(map(str, placed.numa_zones)) or "none named"
    cpus = f", CPUs {format_cpuset(placed.cpuset)}" if placed.cpuset else ""
    return f"NUMA {zones}{cpus}"


def _engine_placed(
    node: NodeSnapshot, zones: tuple[int, ...], cpuset: frozenset[int] | None
) -> Placed:
    """The engine's choice; where it pins CPUs, their NUMA nodes are its zones (the
    kubelet's Topology Manager decides them, not the scheduler's guess)."""
    if cpuset:
        pinned = numa_of_cpus(node, cpuset)
        if pinned:
            zones = pinned
    return Placed(tuple(sorted(zones)), cpuset)


def _differences(real: Placed, engine: Placed) -> tuple[str, ...]:
    """What differs of two feasible placements: the zones (when the engine names any),
    the cpuset (when both are known)."""
    differs = []
    if engine.numa_zones and set(real.numa_zones) != set(engine.numa_zones):
        differs.append(ZONES)
    if real.cpuset is not None and engine.cpuset is not None and real.cpuset != engine.cpuset:
        differs.append(CPUSET)
    return tuple(differs)


def audit_pods(facts: ClusterFacts) -> list[PodAudit]:
    """Every running pod's audit, by node."""
    nodes = {node.name: node for node in facts.snapshot.nodes}
    return [
        audit_pod(facts, pod, nodes)
        for node_name in sorted(facts.live_pods_by_node)
        for pod in facts.live_pods_by_node[node_name]
    ]
