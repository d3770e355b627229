"""The cluster's data-truth checks: do the NRTs, the nodes and the pods tell one story?

Pure Python over `ClusterFacts` (no Django, no database), so every rule is tested on
hand-made values. One function per check, named after its kind; each docstring states
the rule and the upstream code it follows. `find_all` runs them all and sorts the
findings by (kind, node, object), so two reports of the same data are identical.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from enum import StrEnum
from typing import Any

from scheduler_api.engine import (
    AllocationSource,
    Flavour,
    NodeSnapshot,
    PodAllocation,
    TopologyManagerPolicy,
    TopologyManagerScope,
    format_cpuset,
    resolve_topology_manager,
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


class Kind(StrEnum):
    """What a finding is about. The values are a contract (the JSON report, the
    dashboard); `topology.choices.FindingKind` holds the same values with labels."""

    FINGERPRINT_OFF_SYNC = "fingerprint-off-sync"
    STALE_NRT = "stale-nrt"
    ACCOUNTING_MISMATCH = "accounting-mismatch"
    MISSING_NRT = "missing-nrt"
    ORPHAN_NRT = "orphan-nrt"
    MISSING_CPU_TOPOLOGY = "missing-cpu-topology"
    FILTER_ADMITS_ALL = "filter-admits-all"
    POOL_CONFIG_DRIFT = "pool-config-drift"
    POD_ON_RESERVED_CPUS = "pod-on-reserved-cpus"


KINDS: tuple[str, ...] = tuple(Kind)


class Severity(StrEnum):
    INFO = "info"
    WARNING = "warning"
    ERROR = "error"


@dataclass(frozen=True)
class Finding:
    kind: str
    severity: str
    node: str | None
    object: str | None  # "namespace/name" of a pod, an NRT's name, a pool or an NRT zone
    message: str  # one sentence a platform engineer can act on, with the numbers
    evidence: dict[str, Any] = field(default_factory=dict)  # JSON-serialisable

    def as_json(self) -> dict[str, Any]:
        return {
            "kind": str(self.kind),
            "severity": str(self.severity),
            "node": self.node,
            "object": self.object,
            "message": self.message,
            "evidence": self.evidence,
        }


DEFAULT_POOL_LABEL = "node.kubernetes.io/instance-type"
UPSTREAM_FLAVOURS = frozenset({Flavour.UPSTREAM_V1ALPHA1, Flavour.UPSTREAM_V1ALPHA2})
# Both fact builders already drop finished pods; repeated because ClusterFacts does not
# promise it (topology.parsers.pod.FINISHED_PHASES is not importable without Django).
FINISHED_PHASES = frozenset({"Succeeded", "Failed"})
WHOLE_CPU = 1000  # millicores


def find_all(
    facts: ClusterFacts,
    *,
    pool_label: str = DEFAULT_POOL_LABEL,
    stale_nrt_seconds: float = 600,
) -> list[Finding]:
    """Every check's findings, sorted by (kind, node, object) for stable reports."""
    findings = [
        *fingerprint_off_sync(facts),
        *stale_nrt(facts, stale_nrt_seconds),
        *accounting_mismatch(facts),
        *missing_nrt(facts),
        *orphan_nrt(facts),
        *missing_cpu_topology(facts),
        *filter_admits_all(facts),
        *pool_config_drift(facts, pool_label),
        *pod_on_reserved_cpus(facts),
    ]
    return sorted(findings, key=lambda f: (f.kind, f.node or "", f.object or "", f.message))


# --- what the checks share ----------------------------------------------------------------


def live_pods_by_node(facts: ClusterFacts) -> dict[str, list[PodFacts]]:
    """`facts.pods_on(node)` without finished pods, for every node in one pass
    (`pods_on` scans every pod on each call, which is quadratic over a cluster)."""
    by_node: dict[str, list[PodFacts]] = defaultdict(list)
    for pod in facts.pods:
        if pod.node_name and not pod.rejected and pod.phase not in FINISHED_PHASES:
            by_node[pod.node_name].append(pod)
    return by_node


def kubelet_topology_manager(
    node: NodeSnapshot,
) -> tuple[TopologyManagerPolicy, TopologyManagerScope] | None:
    """The kubelet's Topology Manager policy and scope: the snapshot's when known, else
    what an upstream or koordlet NRT says (scheduler-plugins' reading of it; koordlet
    writes the kubelet's policy and scope as the legacy `...PodLevel` names). None for a
    Crane node or a node without an NRT: crane-agent publishes crane-scheduler's own
    policy (from the topology-awareness label), not the kubelet's."""
    if node.flavour is None or node.flavour is Flavour.CRANE:
        if node.tm_policy is None:
            return None
        return node.tm_policy, node.tm_scope or TopologyManagerScope.CONTAINER
    published = resolve_topology_manager(node.topology_policies, node.nrt_attributes)
    return node.tm_policy or published.policy, node.tm_scope or published.scope


def _iso(moment: datetime) -> str:
    return moment.isoformat()


def _plural(count: int, noun: str) -> str:
    return f"{count} {noun}" if count == 1 else f"{count} {noun}s"


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
        f"{_plural(len(counted), 'pod')} the mirror has there ({method}) fingerprint to "
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
        _stale_nrt_finding(nrt, nrt.updated_at, pods.get(nrt.node_name, []), now)
        for nrt in facts.nrts
        if nrt.has_node
        and nrt.updated_at is not None
        and (now - nrt.updated_at).total_seconds() > stale_nrt_seconds
    )
    return [finding for finding in found if finding is not None]


def _stale_nrt_finding(
    nrt: NRTFacts, updated_at: datetime, live: list[PodFacts], now: datetime
) -> Finding | None:
    """The finding when a live pod was created after the NRT last changed."""
    created = [(pod.created_at, pod.key) for pod in live if pod.created_at is not None]
    if not created:
        return None
    newest_at, newest = max(created)
    if newest_at <= updated_at:
        return None
    age = (now - updated_at).total_seconds()
    behind = (newest_at - updated_at).total_seconds()
    return Finding(
        Kind.STALE_NRT,
        Severity.WARNING,
        nrt.node_name,
        nrt.node_name,
        f"NRT {nrt.node_name} last changed {age:.0f} s ago, yet pod {newest} was created "
        f"{behind:.0f} s after that change: check the node agent that publishes it.",
        {
            "updated_at": _iso(updated_at),
            "newest_pod": newest,
            "newest_pod_created_at": _iso(newest_at),
            "seconds_behind": behind,
            "age_seconds": age,
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
        f"{_plural(len(known), 'pod')}: one of the two has missed a pod.",
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


# --- 7. filter-admits-all -----------------------------------------------------------------


def filter_admits_all(facts: ClusterFacts) -> list[Finding]:
    """filter-admits-all: an upstream-NRT node whose NRT does not publish the
    single-numa-node Topology Manager policy. scheduler-plugins' NodeResourceTopologyMatch
    Filter checks alignment only for that policy (kubernetes-sigs/scheduler-plugins
    `pkg/noderesourcetopology/filter.go` at 7a836bcd4d8d: `filterHandlerFromTopologyManager`
    returns no handler for any other policy, and Filter then returns success), so it
    admits every pod there.

    What that costs depends on the kubelet's policy (the snapshot's, else the NRT's):
    `none` aligns nothing and rejects nothing, so nothing is lost (info); `best-effort`
    admits every pod but may spread it across NUMA nodes unnoticed, and `restricted` (or
    a kubelet really at single-numa-node behind a wrong NRT) rejects pods it cannot
    align with TopologyAffinityError after the scheduler placed them (warning)."""
    checked = (node for node in facts.snapshot.nodes if node.flavour in UPSTREAM_FLAVOURS)
    return [_admits_all_finding(node) for node in checked if not _filter_checks_alignment(node)]


def _filter_checks_alignment(node: NodeSnapshot) -> bool:
    published = resolve_topology_manager(node.topology_policies, node.nrt_attributes)
    return published.policy is TopologyManagerPolicy.SINGLE_NUMA_NODE


def _admits_all_finding(node: NodeSnapshot) -> Finding:
    published = resolve_topology_manager(node.topology_policies, node.nrt_attributes).policy
    known = kubelet_topology_manager(node)
    kubelet = known[0] if known else published  # always known on an upstream node
    lead = (
        f"Node {node.name}'s NRT publishes Topology Manager policy {published}, so "
        "NodeResourceTopologyMatch admits every pod there unchecked"
    )
    severity, consequence = _admits_all_consequence(kubelet)
    return Finding(
        Kind.FILTER_ADMITS_ALL,
        severity,
        node.name,
        node.name,
        f"{lead}; {consequence}.",
        {"published_policy": str(published), "kubelet_policy": str(kubelet)},
    )


def _admits_all_consequence(kubelet: TopologyManagerPolicy) -> tuple[Severity, str]:
    if kubelet is TopologyManagerPolicy.NONE:
        return Severity.INFO, "the kubelet (policy none) aligns and rejects nothing either"
    if kubelet is TopologyManagerPolicy.BEST_EFFORT:
        return (
            Severity.WARNING,
            "the kubelet (best-effort) admits them but may split them across NUMA nodes",
        )
    return (
        Severity.WARNING,
        f"the kubelet ({kubelet}) rejects those it cannot align (TopologyAffinityError)",
    )


# --- 8. pool-config-drift -----------------------------------------------------------------

SETTINGS = (
    "tm_policy",
    "tm_scope",
    "cpu_manager_policy",
    "cpu_manager_options",
    "kubelet_reserved_cpus",
    "node_reserved_cpus",
)
NOTHING = "(none)"  # how an empty option map or cpuset reads in a report


def pool_config_drift(facts: ClusterFacts, pool_label: str) -> list[Finding]:
    """pool-config-drift: nodes sharing a value of `pool_label` (one instance type, one
    machine pool) whose kubelet settings differ, so the same pod is aligned, pinned or
    refused differently depending on the node it lands on. One finding per pool, naming
    each differing setting and which nodes hold which value. Unlabelled nodes are not
    grouped, and a setting a node does not publish is not a difference."""
    pools: dict[str, list[NodeSnapshot]] = defaultdict(list)
    for node in facts.snapshot.nodes:
        if pool_label in node.labels:
            pools[node.labels[pool_label]].append(node)
    found = (_drift_finding(pool_label, value, nodes) for value, nodes in pools.items())
    return [finding for finding in found if finding is not None]


def _drift_finding(label: str, value: str, nodes: list[NodeSnapshot]) -> Finding | None:
    holders: dict[str, dict[str, list[str]]] = {setting: {} for setting in SETTINGS}
    for node in sorted(nodes, key=lambda n: n.name):
        for setting, held in kubelet_settings(node).items():
            holders[setting].setdefault(held, []).append(node.name)
    drift = {setting: held for setting, held in holders.items() if len(held) > 1}
    if not drift:
        return None
    details = "; ".join(f"{setting} {_spread(held)}" for setting, held in drift.items())
    return Finding(
        Kind.POOL_CONFIG_DRIFT,
        Severity.WARNING,
        None,
        f"{label}={value}",
        f"The {len(nodes)} nodes of pool {label}={value} differ in "
        f"{_plural(len(drift), 'kubelet setting')} ({details}): make them agree, or the "
        "same pod fits some nodes and not others.",
        drift,
    )


def _spread(held: Mapping[str, list[str]]) -> str:
    return ", ".join(f"{value} on {_plural(len(nodes), 'node')}" for value, nodes in held.items())


def kubelet_settings(node: NodeSnapshot) -> dict[str, str]:
    """The node's kubelet settings as comparable text, leaving out what it does not
    publish: the Topology Manager as `kubelet_topology_manager` knows it, the CPU manager
    when koordlet publishes kubelet.koordinator.sh/cpu-manager-policy, the node
    reservation's CPUs when koordlet re-emits node.koordinator.sh/reservation."""
    settings: dict[str, str] = {}
    topology_manager = kubelet_topology_manager(node)
    if topology_manager is not None:
        settings.update(tm_policy=str(topology_manager[0]), tm_scope=str(topology_manager[1]))
    if node.cpu_manager_policy:
        settings.update(
            cpu_manager_policy=node.cpu_manager_policy,
            cpu_manager_options=_options_text(node.cpu_manager_options),
            kubelet_reserved_cpus=format_cpuset(node.kubelet_reserved_cpus) or NOTHING,
        )
    if node.flavour is Flavour.KOORDINATOR or node.node_reserved_cpus:
        settings["node_reserved_cpus"] = format_cpuset(node.node_reserved_cpus) or NOTHING
    return settings


def _options_text(options: Mapping[str, str]) -> str:
    return ",".join(f"{key}={options[key]}" for key in sorted(options)) or NOTHING


# --- 9. pod-on-reserved-cpus --------------------------------------------------------------


def pod_on_reserved_cpus(facts: ClusterFacts) -> list[Finding]:
    """pod-on-reserved-cpus: a pod whose cpuset (from any allocation) overlaps CPUs the
    node reserves: node.koordinator.sh/reservation's CPUs as koordlet resolved them, or
    the kubelet's reservedCPUs. Neither koord-scheduler nor the kubelet hands those out,
    so the pod was pinned before the reservation or by something that ignored it.
    Koordinator's node resource reservation design (shipped in v1.2;
    koordinator-sh/koordinator `docs/proposals/scheduling/20221227-node-resource-
    reservation.md` at 03d985e71a92, "Descheduler") says such pods are to be evicted."""
    return [
        finding
        for node in facts.snapshot.nodes
        if node.node_reserved_cpus or node.kubelet_reserved_cpus
        for finding in _reserved_overlaps(node)
    ]


def reservations_of(node: NodeSnapshot) -> dict[str, frozenset[int]]:
    return {
        "node.koordinator.sh/reservation": node.node_reserved_cpus,
        "kubelet reservedCPUs": node.kubelet_reserved_cpus,
    }


def _reserved_overlaps(node: NodeSnapshot) -> list[Finding]:
    findings = []
    for pod, cpuset in sorted(pod_cpusets(node.allocations).items()):
        overlaps = {
            name: sorted(cpuset & reserved)
            for name, reserved in reservations_of(node).items()
            if cpuset & reserved
        }
        if overlaps:
            findings.append(_reserved_finding(node.name, pod, cpuset, overlaps))
    return findings


def pod_cpusets(allocations: Iterable[PodAllocation]) -> dict[str, frozenset[int]]:
    """Each pod's pinned CPUs, over all of its allocations."""
    cpusets: dict[str, frozenset[int]] = defaultdict(frozenset)
    for allocation in allocations:
        key = f"{allocation.namespace}/{allocation.name}"
        cpusets[key] = cpusets[key] | allocation.cpuset
    return {pod: cpus for pod, cpus in cpusets.items() if cpus}


def _reserved_finding(
    node: str, pod: str, cpuset: frozenset[int], overlaps: dict[str, list[int]]
) -> Finding:
    cpus = sorted({cpu for overlap in overlaps.values() for cpu in overlap})
    named = " and ".join(overlaps)
    return Finding(
        Kind.POD_ON_RESERVED_CPUS,
        Severity.ERROR,
        node,
        pod,
        f"Pod {pod} is pinned to {_plural(len(cpus), 'CPU')} ({format_cpuset(cpus)}) that "
        f"node {node} reserves ({named}): evict it so that it is placed off them.",
        {"cpus": cpus, "reservations": overlaps, "cpuset": sorted(cpuset)},
    )
