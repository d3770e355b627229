"""The checks of the kubelets' configuration: filter-admits-all, pool-config-drift,
pod-on-reserved-cpus."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping

from scheduler_api.engine import (
    Flavour,
    NodeSnapshot,
    PodAllocation,
    TopologyManagerPolicy,
    format_cpuset,
    resolve_topology_manager,
)
from topology.services.diagnosis.facts import ClusterFacts
from topology.services.diagnosis.findings.common import (
    UPSTREAM_FLAVOURS,
    Finding,
    Kind,
    Severity,
    kubelet_topology_manager,
    plural,
)

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
        f"{plural(len(drift), 'kubelet setting')} ({details}): make them agree, or the "
        "same pod fits some nodes and not others.",
        drift,
    )


def _spread(held: Mapping[str, list[str]]) -> str:
    return ", ".join(f"{value} on {plural(len(nodes), 'node')}" for value, nodes in held.items())


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
        f"Pod {pod} is pinned to {plural(len(cpus), 'CPU')} ({format_cpuset(cpus)}) that "
        f"node {node} reserves ({named}): evict it so that it is placed off them.",
        {"cpus": cpus, "reservations": overlaps, "cpuset": sorted(cpuset)},
    )
