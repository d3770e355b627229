"""Mirrors `mirror.facts_from_mirror` and `pods.diagnose_pods`, redoing only what changed.

A refresh after one pod changed must not read 100k pods and judge 5,000 nodes again
for every Pending pod shape. The what-if's snapshot cache (`whatif.snapshot_cache`)
already keeps each node's `NodeSnapshot` as the very same object while the node's
fingerprint (its rows, its pods' and allocations' row hashes) is unchanged. This cache
sits beside the reference and keys on that identity:

- the pods of each node are read again only when the node's snapshot object is new;
  pods bound to no node of the snapshot (Pending ones, pods on a node the mirror lacks)
  are read every time (few);
- per pod shape (`pods.shape_key`), what each node's verdict adds to a diagnosis
  (`pods.NodeOutcome`, a function of that node alone) is kept with the node object it
  was worked out on, and worked out again only for new node objects. The engine still
  ranks every node (`place`: vectorised, cheap); only the per-node detail, which is
  most of a diagnosis's cost, is kept. Everything is dropped when the Reservations or
  the scheduler profiles change.

The result equals the reference's on the same mirror (`tests/topology/
test_diagnosis_incremental.py` checks it through changes). One `Kept` per cluster per
process; without the snapshot cache (SQLite, or `WHATIF_SNAPSHOT_CACHE_SIZE=0`) every
node object is new each time and this does what the reference does.
"""

from __future__ import annotations

import dataclasses
import threading
from dataclasses import dataclass, field
from typing import Any

from scheduler_api.engine import (
    ClusterSnapshot,
    Judge,
    NodeSnapshot,
    ReservationSnapshot,
    SchedulerProfile,
    prepare,
)
from topology.models import Cluster, Pod
from topology.services.diagnosis.facts import ClusterFacts, NRTFacts, PodFacts
from topology.services.diagnosis.findings import (
    Finding,
    cluster_findings,
    node_findings,
    sorted_findings,
)
from topology.services.diagnosis.mirror import facts_with_pods, pod_facts_of
from topology.services.diagnosis.pods import (
    PLACE_ERRORS,
    NodeOutcome,
    cannot_judge,
    diagnose_pods,
    judged_by,
    node_outcome,
    place_pod,
    placement_request,
    placement_summary,
    pod_judge,
    shape_key,
)
from topology.services.whatif.service import mirror_snapshot

NAMES_PER_QUERY = 1000  # node names per `IN (...)` when reading changed nodes' pods

_HeldPods = tuple[NodeSnapshot, tuple[PodFacts, ...]]
_HeldOutcome = tuple[NodeSnapshot, NodeOutcome]
_HeldFindings = tuple[NodeSnapshot, NRTFacts | None, tuple[Finding, ...]]


@dataclass
class Kept:
    """What one cluster's last refresh worked out, by the node objects it read."""

    pods: dict[str, _HeldPods] = field(default_factory=dict)
    shapes: dict[str, Shape] = field(default_factory=dict)  # by `shape_key`
    findings: dict[str, _HeldFindings] = field(default_factory=dict)  # per-node checks
    nodes: dict[str, NodeSnapshot] = field(default_factory=dict)  # the last refresh's nodes
    reservations: tuple[ReservationSnapshot, ...] | None = None
    profiles: tuple[SchedulerProfile, ...] | None = None


_kept: dict[int, Kept] = {}
_lock = threading.Lock()


def forget(cluster_id: int | None = None) -> None:
    """Drop what is kept (one cluster's, or all): the next refresh reads everything."""
    with _lock:
        if cluster_id is None:
            _kept.clear()
        else:
            _kept.pop(cluster_id, None)


def kept_for(cluster: Cluster) -> Kept:
    with _lock:
        return _kept.setdefault(cluster.pk, Kept())


# --- facts ----------------------------------------------------------------------------------


def facts_from_mirror_kept(cluster: Cluster, kept: Kept) -> ClusterFacts:
    """Mirrors `mirror.facts_from_mirror`: the same facts, each node's pods read again
    only when its snapshot object is new."""
    snapshot = mirror_snapshot(cluster)
    held: dict[str, _HeldPods] = {}
    changed: list[NodeSnapshot] = []
    for node in snapshot.nodes:
        before = kept.pods.get(node.name)
        if before is not None and before[0] is node:
            held[node.name] = before
        else:
            changed.append(node)
    held.update(_read_pods_of(cluster, changed))
    kept.pods = held
    # Not in the reference's order (by namespace and name) across nodes, which sorting
    # 100k pods costs half a second for: every reader groups them by node (each node's
    # pods are read in that order) or sorts what it picks (`diagnose_pods`).
    pods = [pod for _, on_node in held.values() for pod in on_node]
    pods += _pods_elsewhere(cluster, [node.name for node in snapshot.nodes])
    return facts_with_pods(cluster, snapshot, pods)


def _read_pods_of(cluster: Cluster, nodes: list[NodeSnapshot]) -> dict[str, _HeldPods]:
    by_node: dict[str, list[PodFacts]] = {node.name: [] for node in nodes}
    names = list(by_node)
    for start in range(0, len(names), NAMES_PER_QUERY):
        chunk = names[start : start + NAMES_PER_QUERY]
        rows = Pod.objects.filter(cluster=cluster, node_name__in=chunk)
        for pod in pod_facts_of(rows.order_by("namespace", "name")):
            by_node[pod.node_name].append(pod)
    return {node.name: (node, tuple(by_node[node.name])) for node in nodes}


def _pods_elsewhere(cluster: Cluster, node_names: list[str]) -> list[PodFacts]:
    """Pods bound to no node of the snapshot: Pending ones, and any on a node the
    mirror does not have."""
    rows = Pod.objects.filter(cluster=cluster).exclude(node_name__in=node_names)
    return pod_facts_of(rows.order_by("namespace", "name"))


# --- findings -------------------------------------------------------------------------------


def find_all_kept(facts: ClusterFacts, kept: Kept) -> list[Finding]:
    """Mirrors `findings.find_all`: the per-node checks (`NODE_CHECKS`) run again only
    on nodes whose snapshot object or NRT facts changed; the checks across nodes or
    against the clock run every time. Reads `kept.pods` as `facts_from_mirror_kept`
    left it."""
    nrts = {nrt.node_name: nrt for nrt in facts.nrts if nrt.has_node}
    held: dict[str, _HeldFindings] = {}
    changed: list[NodeSnapshot] = []
    for node in facts.snapshot.nodes:
        before = kept.findings.get(node.name)
        if before is not None and before[0] is node and before[1] == nrts.get(node.name):
            held[node.name] = before
        else:
            changed.append(node)
    if changed:
        found: dict[str, list[Finding]] = {node.name: [] for node in changed}
        for finding in node_findings(_facts_of(facts, changed, nrts, kept)):
            found[finding.node or ""].append(finding)
        held.update(
            (node.name, (node, nrts.get(node.name), tuple(found[node.name]))) for node in changed
        )
    kept.findings = held
    per_node = [finding for _, _, on_node in held.values() for finding in on_node]
    return sorted_findings(per_node + cluster_findings(facts))


def _facts_of(
    facts: ClusterFacts, nodes: list[NodeSnapshot], nrts: dict[str, NRTFacts], kept: Kept
) -> ClusterFacts:
    """The facts of `nodes` alone: their snapshots, NRT facts and pods."""
    names = [node.name for node in nodes]
    return dataclasses.replace(
        facts,
        snapshot=dataclasses.replace(facts.snapshot, nodes=tuple(nodes)),
        pods=tuple(pod for name in names if name in kept.pods for pod in kept.pods[name][1]),
        nrts=tuple(nrts[name] for name in names if name in nrts),
    )


# --- diagnoses ------------------------------------------------------------------------------


def diagnose_pods_kept(facts: ClusterFacts, kept: Kept) -> list[dict[str, Any]]:
    """Mirrors `pods.diagnose_pods`: the same diagnoses, each node's outcome for a pod
    shape kept while the node's snapshot object is the same, and a shape's ranking (or
    its whole placement part) kept while the nodes that changed stay where they were."""
    if kept.reservations is not facts.snapshot.reservations or kept.profiles != facts.profiles:
        kept.shapes = {}
    kept.reservations, kept.profiles = facts.snapshot.reservations, facts.profiles
    round_ = _Round.of(facts, kept)
    shapes: dict[str, Shape] = {}

    def judged(facts: ClusterFacts, pod: PodFacts) -> dict[str, Any]:
        key = shape_key(pod)
        shapes[key] = shape = _judged_kept(facts, pod, round_, kept.shapes.get(key))
        return shape.part

    bodies = diagnose_pods(facts, judged=judged)
    kept.shapes = shapes  # shapes no pod has any more are let go
    kept.nodes = round_.nodes
    if round_.sub_snapshot is not None:
        prepare(facts.snapshot)  # keep the whole snapshot's columns the engine's latest
    return bodies


@dataclass(frozen=True)
class Shape:
    """What a pod shape's last diagnosis worked out: each node's outcome with the node
    object it was worked out on, the nodes in ranking order, and the placement part."""

    book: dict[str, _HeldOutcome]
    order: tuple[str, ...]
    part: dict[str, Any]


@dataclass
class _Round:
    """One refresh's nodes, and those that are not the objects the last refresh judged."""

    nodes: dict[str, NodeSnapshot]
    changed: list[NodeSnapshot]
    same_names: bool  # no node came or went since the last refresh
    snapshot: ClusterSnapshot
    sub_snapshot: ClusterSnapshot | None = None

    @classmethod
    def of(cls, facts: ClusterFacts, kept: Kept) -> _Round:
        nodes = {node.name: node for node in facts.snapshot.nodes}
        changed = [node for name, node in nodes.items() if kept.nodes.get(name) is not node]
        return cls(nodes, changed, nodes.keys() == kept.nodes.keys(), facts.snapshot)

    def changed_only(self) -> ClusterSnapshot:
        """The snapshot with only the changed nodes (each node is judged on its own)."""
        if self.sub_snapshot is None:
            self.sub_snapshot = dataclasses.replace(self.snapshot, nodes=tuple(self.changed))
        return self.sub_snapshot


def _judged_kept(facts: ClusterFacts, pod: PodFacts, round_: _Round, before: Shape | None) -> Shape:
    """`pods.judged_part`, from what `before` kept where the changed nodes allow:
    1. the changed nodes give the same outcomes: the part is the same;
    2. they keep their places in the ranking (`NodeOutcome.rank_key`: each node's score
       is its own, no other node's changes it): the ranking is the same, the part is
       summed up again from the outcomes;
    3. else the engine ranks every node again; the outcome of each unchanged node is
       taken from `before`."""
    judge = pod_judge(facts, pod)
    request = placement_request(pod.spec)
    if before is not None and round_.same_names:
        fresh = _changed_outcomes(pod, judge, request, round_)
        if fresh is not None:
            book = {**before.book, **{n: (round_.nodes[n], o) for n, o in fresh.items()}}
            old = {name: before.book[name][1] for name in fresh if name in before.book}
            if all(old.get(name) == outcome for name, outcome in fresh.items()):
                return Shape(book, before.order, before.part)
            if all(_same_place(old.get(name), outcome) for name, outcome in fresh.items()):
                outcomes = [book[name][1] for name in before.order]
                part = judged_by(judge, pod) | placement_summary(outcomes)
                return Shape(book, before.order, part)
    return _ranked_again(facts, pod, judge, request, round_, before)


def _changed_outcomes(
    pod: PodFacts, judge: Judge, request: dict[str, int], round_: _Round
) -> dict[str, NodeOutcome] | None:
    """Each changed node's outcome, judged on the changed nodes alone; None when the
    engine cannot judge the pod."""
    if not round_.changed:
        return {}
    try:
        result = place_pod(round_.changed_only(), pod, judge)
    except PLACE_ERRORS:
        return None
    return {
        node.name: node_outcome(node, result.verdict(node.name), request) for node in round_.changed
    }


def _same_place(old: NodeOutcome | None, new: NodeOutcome) -> bool:
    """Whether a changed node holds the same place in the engine's ranking."""
    return old is not None and old.rank_key == new.rank_key


def _ranked_again(
    facts: ClusterFacts,
    pod: PodFacts,
    judge: Judge,
    request: dict[str, int],
    round_: _Round,
    before: Shape | None,
) -> Shape:
    body = judged_by(judge, pod)
    try:
        result = place_pod(facts.snapshot, pod, judge)
    except PLACE_ERRORS as error:
        return Shape({}, (), body | cannot_judge(pod, error))
    kept_book = before.book if before is not None else {}
    book: dict[str, _HeldOutcome] = {}
    order = result.ranking
    for name in order:
        node = round_.nodes[name]
        held = kept_book.get(name)
        if held is None or held[0] is not node:
            held = (node, node_outcome(node, result.verdict(name), request))
        book[name] = held
    return Shape(book, tuple(order), body | placement_summary([book[n][1] for n in order]))
