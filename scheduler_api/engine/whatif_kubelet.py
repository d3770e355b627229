"""What the kubelet would pin once a pod lands: the static CPU manager behind the scheduler.

scheduler-plugins and crane-scheduler choose a node (and a zone), not CPUs: on a
node whose CPU layout is known (koordlet publishes it), the kubelet's static
policy decides the cpuset. This runs the CPU manager's hints through the Topology
Manager and allocates each container's exclusive CPUs, as `policy_static.go` would.
Only the CPU hint provider is modelled (memory and device managers are not).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from scheduler_api.engine.cpu_topology import CPUTopology
from scheduler_api.engine.cpumanager import (
    StaticPolicyOptions,
    allocate_cpus,
    cpu_hints,
    hints_by_resource,
)
from scheduler_api.engine.errors import AllocationError
from scheduler_api.engine.hints import TopologyHint, merge_hints
from scheduler_api.engine.nrt_match import resolve_topology_manager
from scheduler_api.engine.results import Reason, ReasonCheck
from scheduler_api.engine.snapshot import (
    AllocationSource,
    ContainerSpec,
    NodeSnapshot,
    PodSpec,
    QoSClass,
    TopologyManagerPolicy,
    TopologyManagerScope,
)

OPTION_FLAGS = {
    "full-pcpus-only": "full_pcpus_only",
    "distribute-cpus-across-numa": "distribute_cpus_across_numa",
    "align-by-socket": "align_by_socket",
    "distribute-cpus-across-cores": "distribute_cpus_across_cores",
}


@dataclass(frozen=True, slots=True)
class KubeletPinning:
    """The cpuset the kubelet would pin, or why it would refuse the pod at admission."""

    cpuset: frozenset[int] | None
    reason: Reason | None = None


def static_options(options: Mapping[str, str]) -> StaticPolicyOptions:
    flags = {attr: options.get(key) == "true" for key, attr in OPTION_FLAGS.items()}
    return StaticPolicyOptions(**flags)


def exclusive_cpu_count(container: ContainerSpec) -> int:
    """Whole CPUs a Guaranteed container gets exclusively; 0 for a fractional request."""
    cpu = container.requests.get("cpu", 0)
    return cpu // 1000 if cpu > 0 and cpu % 1000 == 0 else 0


def kubelet_policy(node: NodeSnapshot) -> tuple[TopologyManagerPolicy, TopologyManagerScope]:
    """The kubelet's real configuration when known, else what the NRT says it is."""
    resolved = resolve_topology_manager(node.topology_policies, node.nrt_attributes)
    return node.tm_policy or resolved.policy, node.tm_scope or resolved.scope


def pinned_cpus(node: NodeSnapshot) -> frozenset[int]:
    """CPUs the kubelet has already handed out (koordlet's pod-cpu-allocs)."""
    return frozenset(
        cpu for a in node.allocations if a.source is AllocationSource.KUBELET for cpu in a.cpuset
    )


def _single_numa_hints(
    topology: CPUTopology, free: frozenset[int], count: int
) -> list[TopologyHint]:
    """The hints single-numa-node keeps, without walking all 2^N masks: one zone each,
    preferred (it holds `count` by capacity), and having `count` free."""
    return [
        TopologyHint(frozenset({numa}), True)
        for numa in topology.numa_nodes()
        if len(topology.cpus_in_numa(numa)) >= count
        and len(topology.cpus_in_numa(numa) & free) >= count
    ]


def _merged_hint(
    topology: CPUTopology,
    free: frozenset[int],
    count: int,
    options: StaticPolicyOptions,
    policy: TopologyManagerPolicy,
) -> TopologyHint | Reason:
    if policy is TopologyManagerPolicy.NONE:
        return TopologyHint(None, True)  # the none policy asks no provider for hints
    if policy is TopologyManagerPolicy.SINGLE_NUMA_NODE and not options.align_by_socket:
        hints = _single_numa_hints(topology, free, count)
    else:
        hints = cpu_hints(topology, free, count, options=options)
    numa_nodes = list(topology.numa_nodes())
    merged, admitted = merge_hints(hints_by_resource({"cpu": hints}), numa_nodes, policy)
    if not admitted:
        return Reason(
            ReasonCheck.KUBELET_ADMISSION,
            resource="cpu",
            message=f"kubelet would refuse the pod: TopologyAffinityError under {policy}",
        )
    return merged


def _too_many_numa_nodes(
    node: NodeSnapshot, topology: CPUTopology, policy: TopologyManagerPolicy
) -> Reason | None:
    """kubelet refuses to start a Topology Manager over more NUMA nodes than allowed."""
    resolved = resolve_topology_manager(node.topology_policies, node.nrt_attributes)
    allowed = node.tm_max_numa_nodes or resolved.max_numa_nodes
    numa_count = topology.num_numa_nodes
    if policy is TopologyManagerPolicy.NONE or numa_count <= allowed:
        return None
    message = (
        f"kubelet does not start the Topology Manager on {numa_count} NUMA nodes: "
        f"more than max-allowable-numa-nodes ({allowed})"
    )
    return Reason(ReasonCheck.KUBELET_ADMISSION, message=message)


def kubelet_pinning(node: NodeSnapshot, pod: PodSpec) -> KubeletPinning:
    """The exclusive CPUs the static CPU manager would give the pod on `node`."""
    counts = [exclusive_cpu_count(c) for c in pod.containers]
    if (
        not node.cpus
        or node.cpu_manager_policy != "static"
        or pod.qos_class is not QoSClass.GUARANTEED
        or not any(counts)
    ):
        return KubeletPinning(None)
    topology = CPUTopology.from_cpus(node.cpus)
    options = static_options(node.cpu_manager_options)
    free = topology.cpus() - pinned_cpus(node) - node.kubelet_reserved_cpus
    policy, scope = kubelet_policy(node)
    too_many = _too_many_numa_nodes(node, topology, policy)
    if too_many is not None:
        return KubeletPinning(None, too_many)
    try:
        pod_hint = None
        if scope is TopologyManagerScope.POD:
            pod_hint = _merged_hint(topology, free, sum(counts), options, policy)
        taken: set[int] = set()
        for count in counts:
            if count == 0:
                continue
            hint = pod_hint or _merged_hint(topology, free - taken, count, options, policy)
            if isinstance(hint, Reason):
                return KubeletPinning(None, hint)
            taken |= allocate_cpus(topology, free - taken, count, hint, options=options)
    except AllocationError as error:
        return KubeletPinning(None, Reason(ReasonCheck.KUBELET_ADMISSION, message=str(error)))
    return KubeletPinning(frozenset(taken))
