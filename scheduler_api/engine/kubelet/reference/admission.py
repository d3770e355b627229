"""What the kubelet would pin once a pod lands: the static CPU manager behind the scheduler.

scheduler-plugins and crane-scheduler choose a node (and a zone), not CPUs: on a
node whose CPU layout is known (koordlet publishes it), the kubelet's static
policy decides the cpuset. This runs the CPU manager's hints through the Topology
Manager and allocates each container's exclusive CPUs, as `policy_static.go` would:
init containers first, a finished one's CPUs reusable by the containers after it
(sidecars keep theirs), and the pod scope's one hint sized by `podGuaranteedCPUs`.
The cpuset reported is what the long-running containers (apps and sidecars) hold.

Where the node runs the Static Memory Manager (`memory_manager_policy`, else the NRT's
`memoryManagerPolicy` attribute), its memory and hugepages hints (`memorymanager`) are
merged with the CPU hints, as the Topology Manager merges every provider's, under both
scopes; it then allocates each container's memory (`memory_numa`). Where that policy
is not published, memory is not aligned here and the answer says so. The device
manager is not modelled.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from functools import partial
from typing import NamedTuple

from scheduler_api.engine.kubelet.reference.cpu_topology import CPUTopology
from scheduler_api.engine.kubelet.reference.cpumanager import (
    CPUHints,
    StaticPolicyOptions,
    allocate_cpus,
    cpu_hints,
    hints_by_resource,
)
from scheduler_api.engine.kubelet.reference.memory_state import (
    NodeMemory,
    node_memory,
)
from scheduler_api.engine.kubelet.reference.memorymanager import (
    SIDECAR_RESTART_POLICY,
    MemoryHints,
    MemoryManagerError,
    StaticPolicy,
    calculate_hints,
    memory_aligned,
    provider_hints,
)
from scheduler_api.engine.kubelet.reference.node_config import (
    KUBELET_MODELLED,
    KUBELET_UNKNOWN,
    closest_numa_distances,
    cpu_manager_class,
    kubelet_policy,
    node_cpu_topology,
    numa_distances,
    options_or_refusal,
    pinned_cpus,
    too_many_numa_nodes,
    too_many_numa_nodes_for,
)
from scheduler_api.engine.kubelet.reference.topologymanager import (
    TopologyHint,
    merge_hints,
)
from scheduler_api.engine.model.errors import AllocationError
from scheduler_api.engine.model.kubernetes import pod_level_resources_set
from scheduler_api.engine.model.results import Reason, ReasonCheck
from scheduler_api.engine.model.snapshot import (
    ContainerSpec,
    NodeSnapshot,
    PodSpec,
    QoSClass,
    TopologyManagerPolicy,
    TopologyManagerScope,
)

# kubernetes v1.35 pkg/kubelet/cm/cpumanager/policy_static.go Allocate: with
# PodLevelResources on and spec.resources set, the static policy logs "CPU Manager
# allocation skipped, pod is using pod-level resources which are not supported by the
# static CPU manager policy" and pins nothing. Newer kubelets pin such pods behind the
# PodLevelResourceManagers gate (alpha, off by default): not modelled, the node's gates
# are not known.
POD_LEVEL_RESOURCES_NOT_PINNED = (
    "no exclusive CPUs: the pod sets pod-level resources (spec.resources), which the "
    "static CPU manager policy does not support, so it skips the allocation and the "
    "containers run in the shared pool (kubelet without PodLevelResourceManagers)"
)


@dataclass(frozen=True, slots=True)
class KubeletPinning:
    """The cpuset the kubelet would pin, or why it would refuse the pod at admission;
    `note` says why it pins nothing where that is not plain (pod-level resources)."""

    cpuset: frozenset[int] | None
    reason: Reason | None = None
    note: str = ""
    # the NUMA nodes of the long-running containers' memory where the Static Memory
    # Manager allocated it; None where it did not run
    memory_numa: frozenset[int] | None = None
    # what the answer must add: what was not checked, or was assumed (memory groups)
    notes: tuple[str, ...] = ()
    # False where the kubelet's answer cannot be told (its CPU layout is not published)
    checked: bool = True
    # the refusal is the Topology Manager's TopologyAffinityError (its merge admits no
    # NUMA set), not a manager's allocation failing
    affinity_refused: bool = False


def exclusive_cpu_count(container: ContainerSpec) -> int:
    """Whole CPUs a Guaranteed container gets exclusively; 0 for a fractional request."""
    cpu = container.requests.get("cpu", 0)
    return cpu // 1000 if cpu > 0 and cpu % 1000 == 0 else 0


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
        merged, admitted = merge_hints(
            self.provider_hints(free, reuse, count),
            list(self.topology.numa_nodes()),
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

    def provider_hints(
        self, free: frozenset[int], reuse: frozenset[int], count: int
    ) -> list[list[TopologyHint]]:
        """The CPU manager's hints for `count` CPUs, as `merge_hints` reads them. Under
        single-numa-node (without align-by-socket) only those the policy keeps."""
        topology, options = self.topology, self.options
        if self.policy is TopologyManagerPolicy.SINGLE_NUMA_NODE and not options.align_by_socket:
            hints = _single_numa_hints(topology, free, reuse, count)
        else:
            hints = self.hints(topology, free, count, reuse, options=options)
        return hints_by_resource({"cpu": hints})

    def allocate(
        self, free: frozenset[int], reuse: frozenset[int], count: int, hint: TopologyHint
    ) -> frozenset[int]:
        """allocateCPUs from the free and the reusable CPUs. The reserved CPUs go in too:
        full-pcpus-only counts their siblings as taken."""
        return allocate_cpus(
            self.topology, free | reuse, count, hint, options=self.options, reserved=self.reserved
        )


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
    memory_hints: MemoryHints = calculate_hints,
) -> KubeletPinning:
    """The exclusive CPUs the static CPU manager would give the pod's long-running
    containers (app containers and sidecars) on `node`, and, where the node runs the
    Static Memory Manager, the NUMA nodes of their memory; or why the kubelet refuses.

    `topology`: `node_cpu_topology(node)` when the caller keeps one built.
    `hints`: the CPU hint generator, `cpu_hints` by default; a caller outside the
    reference may pass a fast twin with the same answers (the what-if's admission passes
    `kubelet.fast.hints.cpu_hints_counted`): a reference never imports a fast path.
    `memory_hints`: the Memory Manager's, likewise (`calculate_hints`; the what-if passes
    `kubelet.fast.memory_hints.calculate_hints_counted`)."""
    if pod.qos_class is not QoSClass.GUARANTEED:
        return KubeletPinning(None)  # neither manager aligns any other pod
    if not memory_aligned(pod):
        return _cpu_pinning(node, pod, topology, hints, ())
    memory = node_memory(node)
    if not memory.static:
        return _cpu_pinning(node, pod, topology, hints, memory.notes)
    return _aligned_pinning(node, pod, memory, topology, hints, memory_hints)


TOPOLOGY_AFFINITY_ERROR = "kubelet would refuse the pod: TopologyAffinityError"
CPU_LAYOUT_NOT_PUBLISHED = (
    "not checked: the node runs the Static Memory Manager, but publishes neither its CPU "
    "layout nor its CPU manager policy, whose hints the Topology Manager merges with it"
)


def _cpu_pinning(
    node: NodeSnapshot,
    pod: PodSpec,
    topology: CPUTopology | None,
    hints: CPUHints,
    notes: tuple[str, ...],
) -> KubeletPinning:
    """The static CPU manager alone behind the Topology Manager (the Memory Manager gives
    no hints: not Static, not known, or the pod is not one it aligns). `notes` say what
    was not checked of memory: a refusal stands whatever memory would do, and says none."""
    if (
        not node.cpus
        or node.cpu_manager_policy != "static"
        or not any(count for count, _ in admission_order(pod))
    ):
        return KubeletPinning(None, notes=notes)
    if pod_level_resources_set(pod):
        return KubeletPinning(None, note=POD_LEVEL_RESOURCES_NOT_PINNED, notes=notes)
    static = _static_policy(node, topology or node_cpu_topology(node), hints)
    if isinstance(static, Reason):
        return KubeletPinning(None, static)
    manager = _TopologyManager(static.policy, static.topology.numa_nodes(), static.distances)
    pinning = _admit(manager, static, None, node, pod, notes)
    return pinning if pinning.reason is None else KubeletPinning(None, pinning.reason)


def _aligned_pinning(
    node: NodeSnapshot,
    pod: PodSpec,
    memory: NodeMemory,
    topology: CPUTopology | None,
    hints: CPUHints,
    memory_hints: MemoryHints,
) -> KubeletPinning:
    """The Topology Manager over the static CPU manager (when it gives hints: a pod with
    whole CPUs on a static node) and the Static Memory Manager."""
    assert memory.state is not None
    notes = memory.notes
    exclusive = any(count for count, _ in admission_order(pod))
    cpu_class = cpu_manager_class(node)
    if exclusive and cpu_class == KUBELET_UNKNOWN:
        return _memory_without_cpu_layout(node, pod, memory, memory_hints)
    static = None
    if exclusive and cpu_class == KUBELET_MODELLED:
        built = _static_policy(node, topology or node_cpu_topology(node), hints)
        if isinstance(built, Reason):
            return KubeletPinning(None, built, notes=notes)
        static = built
    policy = kubelet_policy(node)[0]
    cpu_numa = static.topology.numa_nodes() if static is not None else ()
    numa_ids = tuple(sorted({*memory.state.numa_ids(), *cpu_numa}))
    too_many = too_many_numa_nodes_for(node, len(numa_ids), policy)
    if too_many is not None:
        return KubeletPinning(None, too_many, notes=notes)
    manager = _TopologyManager(policy, numa_ids, numa_distances(node, numa_ids))
    state = StaticPolicy(memory.state.with_numa_ids(numa_ids), hints=memory_hints)
    return _admit(manager, static, state, node, pod, notes)


MEMORY_ALONE_REFUSES = (
    "the CPU layout is not published, but the Memory Manager's hints alone leave the "
    "policy no NUMA set to admit: adding the CPU manager's can only narrow them"
)


def _memory_without_cpu_layout(
    node: NodeSnapshot, pod: PodSpec, memory: NodeMemory, memory_hints: MemoryHints
) -> KubeletPinning:
    """Whole CPUs on a Static Memory Manager node whose CPU layout is not published: the
    CPU manager's hints are unknown, so the merge cannot be reproduced, except where the
    Memory Manager's hints alone make the Topology Manager refuse: a merge with more
    providers only narrows what one admits, so that refusal stands."""
    assert memory.state is not None
    notes = memory.notes
    unchecked = KubeletPinning(None, notes=(CPU_LAYOUT_NOT_PUBLISHED, *notes), checked=False)
    policy = kubelet_policy(node)[0]
    if policy not in (TopologyManagerPolicy.RESTRICTED, TopologyManagerPolicy.SINGLE_NUMA_NODE):
        return unchecked  # best-effort admits whatever the hints
    numa_ids = memory.state.numa_ids()
    manager = _TopologyManager(policy, numa_ids, numa_distances(node, numa_ids))
    alone = _admit(manager, None, StaticPolicy(memory.state, hints=memory_hints), node, pod, notes)
    reason = alone.reason
    if reason is None or not alone.affinity_refused:
        return unchecked
    refusal = replace(reason, message=f"{reason.message} ({MEMORY_ALONE_REFUSES})")
    return KubeletPinning(None, refusal, notes=notes)


def _static_policy(
    node: NodeSnapshot, topology: CPUTopology, hints: CPUHints
) -> _StaticPolicy | Reason:
    """The node's static policy, or why the kubelet would not run it."""
    policy, _ = kubelet_policy(node)
    options = options_or_refusal(node, topology, policy)
    if isinstance(options, Reason):
        return options
    too_many = too_many_numa_nodes(node, topology, policy)
    if too_many is not None:
        return too_many
    distances = closest_numa_distances(node, topology)
    return _StaticPolicy(topology, options, policy, node.kubelet_reserved_cpus, distances, hints)


class _Provider(NamedTuple):
    """One hint provider's hints for the Topology Manager: its name, the resources they
    are for, and one list per resource as `merge_hints` reads them."""

    name: str
    resources: tuple[str, ...]
    hints: list[list[TopologyHint]]


@dataclass(frozen=True, slots=True)
class _TopologyManager:
    """The Topology Manager: merges its providers' hints under its policy (`Merge`)."""

    policy: TopologyManagerPolicy
    numa_ids: tuple[int, ...]
    distances: dict[int, dict[int, int]] | None

    def hint(self, providers: Callable[[], list[_Provider]]) -> TopologyHint | Reason:
        """The merged hint, or the TopologyAffinityError refusal naming which provider
        (alone) has no hint the policy accepts. The none policy asks no provider."""
        if self.policy is TopologyManagerPolicy.NONE:
            return TopologyHint(None, True)
        asked = providers()
        merged, admitted = self._merge([lists for p in asked for lists in p.hints])
        return merged if admitted else self._refusal(asked)

    def _merge(self, hints: list[list[TopologyHint]]) -> tuple[TopologyHint, bool]:
        if not hints:  # no provider has a preference: the default affinity, preferred
            return TopologyHint(None, True), True
        return merge_hints(
            hints,
            list(self.numa_ids),
            self.policy,
            prefer_closest=self.distances is not None,
            distances=self.distances,
        )

    def _refusal(self, providers: list[_Provider]) -> Reason:
        message = f"{TOPOLOGY_AFFINITY_ERROR} under {self.policy}"
        if [p.name for p in providers] == [CPU_MANAGER]:
            return Reason(ReasonCheck.KUBELET_ADMISSION, resource="cpu", message=message)
        blocking = [p for p in providers if not self._merge(p.hints)[1]]
        if not blocking:
            why = "each provider alone has a hint it accepts, but no NUMA set suits them all"
            return Reason(ReasonCheck.KUBELET_ADMISSION, message=f"{message}: {why}")
        whose = "; ".join(
            f"the {p.name} has no hint for {', '.join(p.resources)} it accepts" for p in blocking
        )
        resource = blocking[0].resources[0]
        return Reason(
            ReasonCheck.KUBELET_ADMISSION, resource=resource, message=f"{message}: {whose}"
        )

    def memory_hint(self, hint: TopologyHint) -> TopologyHint:
        """The affinity the Memory Manager reads from the Topology Manager's store: none,
        not preferred, under the none policy (nothing was merged); nil under
        single-numa-node when the merge gave the default affinity (its `Merge` turns that
        into nil, and the Memory Manager then works out its default hint); else the
        merged mask, "any NUMA" read as all of them."""
        if self.policy is TopologyManagerPolicy.NONE:
            return TopologyHint(None, False)
        if hint.numa is None:
            if self.policy is TopologyManagerPolicy.SINGLE_NUMA_NODE:
                return hint
            return TopologyHint(frozenset(self.numa_ids), hint.preferred)
        if self.policy is TopologyManagerPolicy.SINGLE_NUMA_NODE and hint.numa == frozenset(
            self.numa_ids
        ):
            return TopologyHint(None, hint.preferred)
        return hint


CPU_MANAGER, MEMORY_MANAGER = "CPU manager", "Memory Manager"


def _memory_provider(hints: dict[str, list[TopologyHint]] | None) -> _Provider:
    return _Provider(
        MEMORY_MANAGER, tuple(sorted(hints or {})) or ("memory",), provider_hints(hints)
    )


def _admit(
    manager: _TopologyManager,
    static: _StaticPolicy | None,
    memory: StaticPolicy | None,
    node: NodeSnapshot,
    pod: PodSpec,
    notes: tuple[str, ...],
) -> KubeletPinning:
    """Admit the containers in order, init containers first: under the pod scope all take
    the pod's one merged hint; under the container scope each gets its own, after the
    containers before it were given theirs (its CPU hints must cover the reusable CPUs).
    Each container gets its CPUs, then its memory, as the providers allocate in turn."""
    free = static.topology.cpus() - pinned_cpus(node) - static.reserved if static else frozenset()
    held: frozenset[int] = frozenset()
    reuse: frozenset[int] = frozenset()

    def providers(container: ContainerSpec | None, count: int) -> list[_Provider]:
        found = []
        if static is not None and count:
            found.append(
                _Provider(CPU_MANAGER, ("cpu",), static.provider_hints(free, reuse, count))
            )
        if memory is not None:
            hints = (
                memory.pod_hints(pod)
                if container is None
                else memory.container_hints(pod, container)
            )
            found.append(_memory_provider(hints))
        return found

    pod_hint = None
    if kubelet_policy(node)[1] is TopologyManagerScope.POD:
        pod_hint = manager.hint(lambda: providers(None, pod_guaranteed_cpus(pod)))
    containers = (*pod.init_containers, *pod.containers)
    try:
        for container, (count, given_back) in zip(containers, admission_order(pod), strict=True):
            hint = pod_hint or manager.hint(partial(providers, container, count))
            if isinstance(hint, Reason):
                return KubeletPinning(None, hint, notes=notes, affinity_refused=True)
            if static is not None and count:
                cpus = static.allocate(free, reuse, count, hint)
                free -= cpus
                reuse = reuse | cpus if given_back else reuse - cpus
                held = held if given_back else held | cpus
            if memory is not None:
                memory.allocate(pod, container, manager.memory_hint(hint))
    except AllocationError as error:
        return KubeletPinning(
            None, Reason(ReasonCheck.KUBELET_ADMISSION, message=str(error)), notes=notes
        )
    except MemoryManagerError as error:
        return KubeletPinning(None, _memory_refusal(error), notes=notes)
    numa = memory.memory_numa(_long_running(pod)) if memory is not None else None
    return KubeletPinning(held if static is not None else None, memory_numa=numa, notes=notes)


def _memory_refusal(error: MemoryManagerError) -> Reason:
    """The Memory Manager's Allocate error as the kubelet reports it (admission's
    UnexpectedAdmissionError: "Allocate failed due to ..., which is unexpected")."""
    message = (
        "kubelet would refuse the pod: UnexpectedAdmissionError: Allocate failed due to "
        f"{error}, which is unexpected (the Static Memory Manager)"
    )
    return Reason(ReasonCheck.KUBELET_ADMISSION, resource="memory", message=message)


def _long_running(pod: PodSpec) -> list[str]:
    """The containers that keep what they hold: sidecars and app containers."""
    sidecars = [c.name for c in pod.init_containers if c.restart_policy == SIDECAR_RESTART_POLICY]
    return sidecars + [c.name for c in pod.containers]
