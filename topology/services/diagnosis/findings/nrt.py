"""The checks of what the NRTs publish: fingerprint-off-sync, stale-nrt,
accounting-mismatch, missing-nrt, orphan-nrt, missing-cpu-topology."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from scheduler_api.engine import (
    AllocationSource,
    Flavour,
    NodeSnapshot,
    PodAllocation,
)
from topology.domain.podfingerprint import (
    METHOD_WITH_EXCLUSIVE_RESOURCES,
    FingerprintError,
    FingerprintMethod,
    PodIdentity,
    fingerprint,
    method_from_attribute,
    parse_fingerprint,
    scheduler_counts_pod,
)
from topology.services.diagnosis.facts import ClusterFacts, NRTFacts, PodFacts
from topology.services.diagnosis.findings.common import (
    UPSTREAM_FLAVOURS,
    WHOLE_CPU,
    Finding,
    Kind,
    Severity,
    iso,
    live_pods_by_node,
    plural,
)

# --- 1. fingerprint-off-sync --------------------------------------------------------------


def fingerprint_off_sync(facts: ClusterFacts) -> list[Finding]:
    """fingerprint-off-sync: an NRT's published pod fingerprint differs from the one of
    the pods the mirror has bound to its node (not finished, not rejected).

    The fingerprint is recomputed with the method the NRT declares, read as
    scheduler-plugins reads it (`method_from_attribute`: empty or unknown means `all`),
    and for `with-exclusive-resources` with the scheduler's rule (`scheduler_counts_pod`,
    resourcerequests.AreExclusiveForPod), since the scheduler is who compares
    (scheduler-plugins `pkg/noderesourcetopology/cache/overreserve.go` at 903da7df82cb,
    resync: a node whose fingerprint does not match keeps its old cached NRT). A
    fingerprint we cannot read (malformed, another version) is reported at warning: it
    cannot be checked."""
    pods = live_pods_by_node(facts)
    nodes = {node.name: node for node in facts.snapshot.nodes}
    published = [nrt for nrt in facts.nrts if nrt.has_node and nrt.pods_fingerprint]
    checked = (
        _fingerprint_finding(nrt, nodes.get(nrt.node_name), pods.get(nrt.node_name, []))
        for nrt in published
    )
    return [finding for finding in checked if finding is not None]


def _fingerprint_finding(
    nrt: NRTFacts, node: NodeSnapshot | None, live: list[PodFacts]
) -> Finding | None:
    method = method_from_attribute(nrt.pods_fingerprint_method or None)
    try:
        parse_fingerprint(nrt.pods_fingerprint)
    except FingerprintError as error:
        return _unreadable_fingerprint(nrt, method, error)
    counted = fingerprinted_pods(node, live, method)
    computed = fingerprint(PodIdentity(p.namespace, p.name) for p in counted)
    if computed == nrt.pods_fingerprint:
        return None
    return Finding(
        Kind.FINGERPRINT_OFF_SYNC,
        Severity.ERROR,
        nrt.node_name,
        nrt.node_name,
        f"NRT {nrt.node_name} publishes pod fingerprint {nrt.pods_fingerprint}, but the "
        f"{plural(len(counted), 'pod')} the mirror has there ({method}) fingerprint to "
        f"{computed}: the NRT or the mirror is behind, and the scheduler distrusts this "
        "NRT until they agree.",
        {
            "published": nrt.pods_fingerprint,
            "computed": computed,
            "method": str(method),
            "pod_count": len(counted),
        },
    )


def _unreadable_fingerprint(
    nrt: NRTFacts, method: FingerprintMethod, error: FingerprintError
) -> Finding:
    return Finding(
        Kind.FINGERPRINT_OFF_SYNC,
        Severity.WARNING,
        nrt.node_name,
        nrt.node_name,
        f"NRT {nrt.node_name}'s pod fingerprint {nrt.pods_fingerprint!r} cannot be checked "
        f"({error}); check the node agent's version.",
        {"published": nrt.pods_fingerprint, "method": str(method), "error": str(error)},
    )


def fingerprinted_pods(
    node: NodeSnapshot | None, live: list[PodFacts], method: FingerprintMethod
) -> list[PodFacts]:
    """The pods the scheduler fingerprints under `method`: all of them, or those whose
    spec requests an exclusive resource among the NRT's resource names."""
    if method is not METHOD_WITH_EXCLUSIVE_RESOURCES:
        return live
    names = {name for zone in node.zones for name in zone.resources} if node else set()
    return [
        pod
        for pod in live
        if scheduler_counts_pod(
            pod.spec.qos_class, pod.spec.containers, pod.spec.init_containers, names
        )
    ]


# --- 2. stale-nrt -------------------------------------------------------------------------


def stale_nrt(facts: ClusterFacts, stale_nrt_seconds: float) -> list[Finding]:
    """stale-nrt: an NRT last changed more than `stale_nrt_seconds` before `facts.now`
    while a pod on its node was created after that change: the pods changed and the
    node agent did not republish (NFD topology-updater and RTE republish on a short
    period and on pod events). Skipped when the time of either is unknown."""
    if facts.now is None:
        return []
    now, pods = facts.now, live_pods_by_node(facts)
    found = (
        _stale_nrt_finding(nrt, nrt.updated_at, pods.get(nrt.node_name, []))
        for nrt in facts.nrts
        if nrt.has_node
        and nrt.updated_at is not None
        and (now - nrt.updated_at).total_seconds() > stale_nrt_seconds
    )
    return [finding for finding in found if finding is not None]


def _stale_nrt_finding(nrt: NRTFacts, updated_at: datetime, live: list[PodFacts]) -> Finding | None:
    """The finding when a live pod was created after the NRT last changed."""
    created = [(pod.created_at, pod.key) for pod in live if pod.created_at is not None]
    if not created:
        return None
    newest_at, newest = max(created)
    if newest_at <= updated_at:
        return None
    behind = (newest_at - updated_at).total_seconds()
    # No age in the message or the evidence: they are stored, and would change with
    # every refresh while nothing else does (the age is `now - updated_at`).
    return Finding(
        Kind.STALE_NRT,
        Severity.WARNING,
        nrt.node_name,
        nrt.node_name,
        f"NRT {nrt.node_name} has not changed since {iso(updated_at)}, yet pod {newest} was "
        f"created {behind:.0f} s after that change: check the node agent that publishes it.",
        {
            "updated_at": iso(updated_at),
            "newest_pod": newest,
            "newest_pod_created_at": iso(newest_at),
            "seconds_behind": behind,
        },
    )


# --- 3. accounting-mismatch ---------------------------------------------------------------


@dataclass(frozen=True)
class HeldCPUs:
    """CPUs one pod holds exclusively on one NUMA zone, as Topolens knows them."""

    pod: str
    source: str
    cpus: tuple[int, ...]  # the CPU ids; () when the source gives only an amount
    millicores: int

    def as_json(self) -> dict[str, Any]:
        return {
            "pod": self.pod,
            "source": self.source,
            "cpus": list(self.cpus),
            "millicores": self.millicores,
        }


def accounting_mismatch(facts: ClusterFacts) -> list[Finding]:
    """accounting-mismatch: on a NUMA zone, the exclusive CPUs the NRT says are taken
    (cpu allocatable − available) and the CPUs Topolens knows are held exclusively
    there differ by at least one whole CPU.

    Only upstream NRTs are checked: NFD topology-updater and resource-topology-exporter
    publish `available` as allocatable minus what the kubelet's podresources API lists
    as assigned, i.e. exclusive CPUs. koordlet publishes `available` equal to
    `allocatable` (it subtracts nothing), and Crane zones publish no `available`, so
    their difference means nothing. A node is compared only when Topolens knows at
    least one exclusive holding on it (kubelet pod-cpu-allocs, a Koordinator
    resource-status cpuset, a Crane topology-result): without one the mirror is blind
    there (scheduler-plugins nodes carry no per-pod CPU annotations), not the NRT wrong."""
    checked = (node for node in facts.snapshot.nodes if node.flavour in UPSTREAM_FLAVOURS)
    return [finding for node in checked for finding in _zone_mismatches(node)]


def _zone_mismatches(node: NodeSnapshot) -> list[Finding]:
    held = exclusive_cpus_by_zone(node)
    if not held:
        return []
    findings = []
    for zone in node.zones:
        amounts = zone.resources.get("cpu")
        if amounts is None:
            continue
        published = amounts.allocatable - amounts.available
        known = held.get(zone.numa_id, [])
        if abs(published - sum(h.millicores for h in known)) >= WHOLE_CPU:
            findings.append(_mismatch_finding(node.name, zone.name, published, known))
    return findings


def _mismatch_finding(node: str, zone: str, published: int, known: list[HeldCPUs]) -> Finding:
    held = sum(h.millicores for h in known)
    return Finding(
        Kind.ACCOUNTING_MISMATCH,
        Severity.WARNING,
        node,
        f"{node}/{zone}",
        f"NRT {node} says {published / WHOLE_CPU:g} CPUs of zone {zone} are taken "
        f"exclusively, but Topolens knows of {held / WHOLE_CPU:g} held by "
        f"{plural(len(known), 'pod')}: one of the two has missed a pod.",
        {
            "zone": zone,
            "nrt_taken_millicores": published,
            "known_held_millicores": held,
            "allocations": [h.as_json() for h in known],
        },
    )


def exclusive_cpus_by_zone(node: NodeSnapshot) -> dict[int, list[HeldCPUs]]:
    """Per NUMA id, the exclusive CPUs each allocation holds there.

    A cpuset is split by the node's CPU table; without one (upstream NRTs publish none)
    the allocation's per-NUMA cpu amount stands in. A kubelet cpuset on a node without
    a CPU table cannot be placed on a zone and is left out."""
    numa_of = {cpu: numa for cpu, _core, _socket, numa in node.cpus}
    by_zone: dict[int, list[HeldCPUs]] = defaultdict(list)
    for allocation in node.allocations:
        for numa_id, held in _held_per_zone(allocation, numa_of).items():
            by_zone[numa_id].append(held)
    return by_zone


def _held_per_zone(allocation: PodAllocation, numa_of: Mapping[int, int]) -> dict[int, HeldCPUs]:
    pod = f"{allocation.namespace}/{allocation.name}"
    source = str(allocation.source)
    if allocation.cpuset and numa_of and allocation.cpuset <= numa_of.keys():
        per_zone: dict[int, list[int]] = defaultdict(list)
        for cpu in sorted(allocation.cpuset):
            per_zone[numa_of[cpu]].append(cpu)
        return {
            numa: HeldCPUs(pod, source, tuple(cpus), len(cpus) * WHOLE_CPU)
            for numa, cpus in per_zone.items()
        }
    if allocation.source is AllocationSource.CRANE or (
        allocation.source is AllocationSource.KOORDINATOR and allocation.cpuset
    ):
        return {
            numa: HeldCPUs(pod, source, (), amounts["cpu"])
            for numa, amounts in allocation.numa_resources.items()
            if amounts.get("cpu")
        }
    return {}


# --- 4. missing-nrt, 5. orphan-nrt, 6. missing-cpu-topology --------------------------------


def missing_nrt(facts: ClusterFacts) -> list[Finding]:
    """missing-nrt: a node without a NodeResourceTopology. The topology-aware schedulers
    cannot see its NUMA zones: scheduler-plugins' Filter admits every pod there unchecked
    (`nodeTopology == nil`) and its Score gives 0."""
    return [
        Finding(
            Kind.MISSING_NRT,
            Severity.INFO,
            node.name,
            None,
            f"Node {node.name} publishes no NodeResourceTopology: topology-aware schedulers "
            "place pods there without seeing its NUMA zones; deploy the node agent if it "
            "should run NUMA-sensitive pods.",
            {"flavour": None},
        )
        for node in facts.snapshot.nodes
        if node.flavour is None
    ]


def orphan_nrt(facts: ClusterFacts) -> list[Finding]:
    """orphan-nrt: an NRT whose node does not exist (a leftover object, or an agent
    publishing under a name that is not its node's)."""
    return [
        Finding(
            Kind.ORPHAN_NRT,
            Severity.WARNING,
            None,
            nrt.node_name,
            f"NRT {nrt.node_name} names a node the cluster does not have: delete it, or fix "
            "the node name its agent publishes under.",
            {"nrt": nrt.node_name, "flavour": nrt.flavour},
        )
        for nrt in facts.nrts
        if not nrt.has_node
    ]


def missing_cpu_topology(facts: ClusterFacts) -> list[Finding]:
    """missing-cpu-topology: a Koordinator node whose NRT has no CPU table (annotation
    node.koordinator.sh/cpu-topology). koord-scheduler's NodeNUMAResource Filter refuses
    every pod that needs bound CPUs (LSE, LSR) there with "node(s) invalid CPU
    Topology" (koordinator `pkg/scheduler/plugins/nodenumaresource/plugin.go`)."""
    return [
        Finding(
            Kind.MISSING_CPU_TOPOLOGY,
            Severity.WARNING,
            node.name,
            node.name,
            f"Koordinator node {node.name} publishes no CPU table "
            "(node.koordinator.sh/cpu-topology): koord-scheduler cannot bind CPUs there, so "
            "LSE and LSR pods will not schedule on it; check koordlet on the node.",
            {"flavour": str(node.flavour), "cpu_count": 0},
        )
        for node in facts.snapshot.nodes
        if node.flavour is Flavour.KOORDINATOR and not node.cpus
    ]
