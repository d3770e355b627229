"""What the kubelet would pin once a pod lands: the static CPU manager behind the scheduler.

scheduler-plugins and crane-scheduler choose a node (and a zone), not CPUs: on a
node whose CPU layout is known (koordlet publishes it), the kubelet's static
policy decides the cpuset. This runs the CPU manager's hints through the Topology
Manager and allocates each container's exclusive CPUs, as `policy_static.go` would:
init containers first, a finished one's CPUs reusable by the containers after it
(sidecars keep theirs), and the pod scope's one hint sized by `podGuaranteedCPUs`.
The cpuset reported is what the long-running containers (apps and sidecars) hold.
Only the CPU hint provider is modelled (memory and device managers are not).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from scheduler_api.engine.kubelet.reference.cpu_topology import CPUTopology
from scheduler_api.engine.kubelet.reference.cpumanager import (
    CPUHints,
    StaticPolicyOptions,
    allocate_cpus,
    check_options_fit,
    cpu_hints,
    hints_by_resource,
)
from scheduler_api.engine.kubelet.reference.topologymanager import TopologyHint, merge_hints
from scheduler_api.engine.model.errors import AllocationError
from scheduler_api.engine.model.results import Reason, ReasonCheck
from scheduler_api.engine.model.snapshot import (
    AllocationSource,
    ContainerSpec,
    NodeSnapshot,
    PodSpec,
    QoSClass,
    TopologyManagerPolicy,
    TopologyManagerScope,
)
from scheduler_api.engine.schedulerplugins.reference.common import (
    TopologyManagerConfig,
    resolve_topology_manager,
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


def published_topology_manager(node: NodeSnapshot) -> TopologyManagerConfig:
    """The Topology Manager configuration the node's NRT publishes."""
    return resolve_topology_manager(node.topology_policies, node.nrt_attributes)


def kubelet_policy(node: NodeSnapshot) -> tuple[TopologyManagerPolicy, TopologyManagerScope]:
    """The kubelet's real configuration when known, else what the NRT says it is."""
    resolved = published_topology_manager(node)
    return node.tm_policy or resolved.policy, node.tm_scope or resolved.scope


# What a node publishes of its kubelet's CPU manager (`kubelet_class`).
KUBELET_MODELLED, KUBELET_NONE, KUBELET_UNKNOWN = 0, 1, 2


def kubelet_class(node: NodeSnapshot) -> int:
    """KUBELET_MODELLED: the static policy with a published CPU layout, which
    `kubelet_pinning` reproduces; KUBELET_NONE: the none policy, which pins nothing;
    KUBELET_UNKNOWN: neither is published."""
    if node.cpu_manager_policy == "none":
        return KUBELET_NONE
    if node.cpus and node.cpu_manager_policy == "static":
        return KUBELET_MODELLED
    return KUBELET_UNKNOWN


def pinned_cpus(node: NodeSnapshot) -> frozenset[int]:
    """CPUs the kubelet has already handed out (koordlet's pod-cpu-allocs)."""
    return frozenset(
        cpu for a in node.allocations if a.source is AllocationSource.KUBELET for cpu in a.cpuset
    )


def _single_numa_hints(
    topology: CPUTopology, free: frozenset[int], reuse: frozenset[int], count: int
) -> list[TopologyHint]:
    """The hints single-numa-node keeps, without walking all 2^N masks: one zone each,
    preferred (it holds `count` by capacity), holding every reusable CPU, and having
    `count` free with them."""
    reuse_numa = {topology.numa_of(cpu) for cpu in reuse}
    return [
        TopologyHint(frozenset({numa}), True)
        for numa in topology.numa_nodes()
        if reuse_numa <= {numa}
        and len(topology.cpus_in_numa(numa)) >= count
        and len(reuse) + len(topology.cpus_in_numa(numa) & free) >= count
    ]


PREFER_CLOSEST_OPTION = "prefer-closest-numa-nodes"
PREFER_CLOSEST_ATTRIBUTE = "topologyManagerOptionPreferClosestNumaNodes"


def closest_numa_distances(
    node: NodeSnapshot, topology: CPUTopology
) -> dict[int, dict[int, int]] | None:
    """The NUMA distance table when the Topology Manager prefers the closest NUMA nodes.

    The option comes from the kubelet's configuration when known, else from the NRT's
    attributes; the distances from the NRT zones' costs. None when the option is off,
    or when the costs miss a pair of the machine's NUMA nodes: the merge then prefers
    the narrowest mask, as without the option.
    """
    enabled = node.tm_options.get(PREFER_CLOSEST_OPTION) == "true" or (
        node.nrt_attributes.get(PREFER_CLOSEST_ATTRIBUTE) == "true"
    )
    if not enabled:
        return None
    numa_ids = topology.numa_nodes()
    costs = {zone.numa_id: zone.costs for zone in node.zones if zone.zone_type == "Node"}
    if not all(b in costs.get(a, {}) for a in numa_ids for b in numa_ids):
        return None
    return {a: {b: costs[a][b] for b in numa_ids} for a in numa_ids}


@dataclass(frozen=True, slots=True)
class _StaticPolicy:
    """The node's static CPU manager behind its Topology Manager, as the kubelet runs.

    `hints` generates the CPU manager's hints: `cpu_hints` unless a caller outside the
    reference injects a twin with the same answers (see `kubelet_pinning`)."""

    topology: CPUTopology
    options: StaticPolicyOptions
    policy: TopologyManagerPolicy
    reserved: frozenset[int]
    distances: dict[int, dict[int, int]] | None
    hints: CPUHints = cpu_hints

    def hint(
        self, free: frozenset[int], reuse: frozenset[int], count: int
    ) -> TopologyHint | Reason:
        """The Topology Manager's merge of the CPU manager's hints for `count` CPUs."""
        if self.policy is TopologyManagerPolicy.NONE:
            return TopologyHint(None, True)  # the none policy asks no provider for hints
        topology, options = self.topology, self.options
        if self.policy is TopologyManagerPolicy.SINGLE_NUMA_NODE and not options.align_by_socket:
            hints = _single_numa_hints(topology, free, reuse, count)
        else:
            hints = self.hints(topology, free, count, reuse, options=options)
        merged, admitted = merge_hints(
            hints_by_resource({"cpu": hints}),
            list(topology.numa_nodes()),
            self.policy,
            prefer_closest=self.distances is not None,
            distances=self.distances,
        )
        if not admitted:
            return Reason(
                ReasonCheck.KUBELET_ADMISSION,
                resource="cpu",
                message=f"kubelet would refuse the pod: TopologyAffinityError under {self.policy}",
            )
        return merged

    def allocate(
        self, free: frozenset[int], reuse: frozenset[int], count: int, hint: TopologyHint
    ) -> frozenset[int]:
        """allocateCPUs from the free and the reusable CPUs. The reserved CPUs go in too:
        full-pcpus-only counts their siblings as taken."""
        return allocate_cpus(
            self.topology, free | reuse, count, hint, options=self.options, reserved=self.reserved
        )


def _too_many_numa_nodes(
    node: NodeSnapshot, topology: CPUTopology, policy: TopologyManagerPolicy
) -> Reason | None:
    """kubelet refuses to start a Topology Manager over more NUMA nodes than allowed."""
    resolved = published_topology_manager(node)
    allowed = node.tm_max_numa_nodes or resolved.max_numa_nodes
    numa_count = topology.num_numa_nodes
    if policy is TopologyManagerPolicy.NONE or numa_count <= allowed:
        return None
    message = (
        f"kubelet does not start the Topology Manager on {numa_count} NUMA nodes: "
        f"more than max-allowable-numa-nodes ({allowed})"
    )
    return Reason(ReasonCheck.KUBELET_ADMISSION, message=message)


def _not_started(why: str) -> Reason:
    return Reason(ReasonCheck.KUBELET_ADMISSION, message=f"kubelet would not start: {why}")


def _options_or_refusal(
    node: NodeSnapshot, topology: CPUTopology, policy: TopologyManagerPolicy
) -> StaticPolicyOptions | Reason:
    """The static policy's options, or why the kubelet would refuse them at start-up
    (`ValidateStaticPolicyOptions` and the options' own compatibility checks)."""
    try:
        options = static_options(node.cpu_manager_options)
        check_options_fit(topology, options)
    except ValueError as error:
        return _not_started(str(error))
    if options.align_by_socket and policy is TopologyManagerPolicy.SINGLE_NUMA_NODE:
        return _not_started(
            "the single-numa-node Topology Manager policy is incompatible with the "
            "align-by-socket CPU manager option"
        )
    return options


def pod_guaranteed_cpus(pod: PodSpec) -> int:
    """podGuaranteedCPUs: the larger of what any init container needs (with the sidecars
    started before it) and what the app containers and every sidecar need together."""
    by_init = by_sidecars = 0
    for container in pod.init_containers:
        cpus = exclusive_cpu_count(container)
        if container.restart_policy == SIDECAR_RESTART_POLICY:
            by_sidecars += cpus
        else:
            by_init = max(by_init, by_sidecars + cpus)
    by_apps = sum(exclusive_cpu_count(container) for container in pod.containers)
    return max(by_init, by_apps + by_sidecars)


SIDECAR_RESTART_POLICY = "Always"


def admission_order(pod: PodSpec) -> list[tuple[int, bool]]:
    """(exclusive CPUs, whether they are given back for reuse) per container, in the
    order the kubelet admits them: init containers first. An init container that is not
    a sidecar runs to completion first: the containers after it may reuse its CPUs."""
    return [
        (exclusive_cpu_count(c), c.restart_policy != SIDECAR_RESTART_POLICY)
        for c in pod.init_containers
    ] + [(exclusive_cpu_count(c), False) for c in pod.containers]


def kubelet_pinning(
    node: NodeSnapshot,
    pod: PodSpec,
    *,
    topology: CPUTopology | None = None,
    hints: CPUHints = cpu_hints,
) -> KubeletPinning:
    """The exclusive CPUs the static CPU manager would give the pod's long-running
    containers (app containers and sidecars) on `node`.

    `topology`: `CPUTopology.from_cpus(node.cpus)` when the caller keeps one built.
    `hints`: the CPU hint generator, `cpu_hints` by default; a caller outside the
    reference may pass a fast twin with the same answers (the what-if's admission passes
    `kubelet.fast.hints.cpu_hints_counted`): a reference never imports a fast path."""
    order = admission_order(pod)
    if (
        not node.cpus
        or node.cpu_manager_policy != "static"
        or pod.qos_class is not QoSClass.GUARANTEED
        or not any(count for count, _ in order)
    ):
        return KubeletPinning(None)
    static = _static_policy(node, topology or CPUTopology.from_cpus(node.cpus), hints)
    if isinstance(static, Reason):
        return KubeletPinning(None, static)
    free = static.topology.cpus() - pinned_cpus(node) - static.reserved
    try:
        return _pin(static, free, order, kubelet_policy(node)[1], pod_guaranteed_cpus(pod))
    except AllocationError as error:
        return KubeletPinning(None, Reason(ReasonCheck.KUBELET_ADMISSION, message=str(error)))


def _static_policy(
    node: NodeSnapshot, topology: CPUTopology, hints: CPUHints
) -> _StaticPolicy | Reason:
    """The node's static policy, or why the kubelet would not run it."""
    policy, _ = kubelet_policy(node)
    options = _options_or_refusal(node, topology, policy)
    if isinstance(options, Reason):
        return options
    too_many = _too_many_numa_nodes(node, topology, policy)
    if too_many is not None:
        return too_many
    distances = closest_numa_distances(node, topology)
    return _StaticPolicy(topology, options, policy, node.kubelet_reserved_cpus, distances, hints)


def _pin(
    static: _StaticPolicy,
    free: frozenset[int],
    order: list[tuple[int, bool]],
    scope: TopologyManagerScope,
    pod_cpus: int,
) -> KubeletPinning:
    """Admit the containers in order: under the pod scope all take the pod's one hint;
    under the container scope each gets its own, which must cover the reusable CPUs."""
    pod_hint = (
        static.hint(free, frozenset(), pod_cpus) if scope is TopologyManagerScope.POD else None
    )
    held: frozenset[int] = frozenset()
    reuse: frozenset[int] = frozenset()
    for count, given_back in order:
        if count == 0:
            continue
        hint = pod_hint or static.hint(free, reuse, count)
        if isinstance(hint, Reason):
            return KubeletPinning(None, hint)
        cpus = static.allocate(free, reuse, count, hint)
        free -= cpus
        reuse = reuse | cpus if given_back else reuse - cpus
        held = held if given_back else held | cpus
    return KubeletPinning(held)
