"""Why the kubelet refuses a pod with TopologyAffinityError: each hint provider's hints.

The kubelet's Topology Manager (`pkg/kubelet/cm/topologymanager`, scope.go and
policy_*.go) asks every hint provider for the NUMA affinities it could satisfy, merges
them under the node's policy, and refuses the pod when the merged hint is not admitted;
the event says only "Resources cannot be allocated with Topology locality" and names no
provider (an upstream pull request to say which was closed unmerged). This reproduces
the admission on the node as the snapshot has it and keeps every provider's hints, so
the answer can say which one had none the policy accepts.

Providers, as far as the node publishes what they read:
- **cpu**: the static CPU manager's `generateCPUTopologyHints` over the node's CPU table
  (`cpumanager.cpu_hints`), for a Guaranteed pod's whole CPUs; without a static policy or
  a CPU table it gives no preference, as the kubelet's none policy does.
- **memory and hugepages**: the Static Memory Manager's `GetPodTopologyHints`
  (`memorymanager`: `calculateHints` with its multi-NUMA group rules) over the machine
  state the node publishes (the NRT zones' amounts, its pods' groups), for a Guaranteed
  pod. Where the node publishes no Memory Manager policy, the Static policy's hints are
  shown as an assumption and the explanation says so; under the None policy none.
- **devices and other extended resources**: the device manager's hints over the NRT
  zones' available counts.
The snapshot is the node now, not at the moment of the refusal: pods that came or went
since change the hints, and the explanation says that too.
"""

from __future__ import annotations

from dataclasses import dataclass

from scheduler_api.engine.kubelet.reference.admission import (
    pod_guaranteed_cpus,
)
from scheduler_api.engine.kubelet.reference.cpu_topology import CPUTopology
from scheduler_api.engine.kubelet.reference.cpumanager import cpu_hints
from scheduler_api.engine.kubelet.reference.memory_state import (
    POLICY_NOT_PUBLISHED,
    machine_state,
    memory_manager_policy,
)
from scheduler_api.engine.kubelet.reference.memorymanager import (
    MemoryManagerPolicy,
    StaticPolicy,
    is_memory_resource,
    memory_aligned,
)
from scheduler_api.engine.kubelet.reference.node_config import (
    kubelet_policy,
    pinned_cpus,
    static_options,
)
from scheduler_api.engine.kubelet.reference.topologymanager import (
    TopologyHint,
    hints_by_resource,
    merge_hints,
    resource_hints,
)
from scheduler_api.engine.model.kubernetes import pod_request
from scheduler_api.engine.model.snapshot import (
    NodeSnapshot,
    PodSpec,
    QoSClass,
    TopologyManagerPolicy,
    TopologyManagerScope,
)

# Requests no Topology Manager provider aligns.
UNALIGNED = frozenset({"cpu", "ephemeral-storage", "pods", "storage"})
MEMORY_NOTE = (
    "the node does not publish its Memory Manager policy: memory and hugepages hints are "
    "shown as the Static Memory Manager would give them (assumed), from the NRT's amounts"
)
MEMORY_NONE_NOTE = "memory: the Memory Manager policy is None: it gives no hints"
NO_MEMORY_HINTS_NOTE = (
    "memory: no NUMA set has the free memory and hugepages the pod asks (within the "
    "Memory Manager's group rules): it gives no hints, which the Topology Manager reads "
    "as no preference, and refuses the pod when it allocates"
)
DISAGREE_NOTE = (
    "each provider alone has a hint the policy accepts, but they disagree: no NUMA set is "
    "preferred by all of them together"
)
NOW_NOTE = "reproduced on the node as the mirror has it now, not at the moment of the refusal"


@dataclass(frozen=True)
class ProviderHints:
    """One provider's hints for one resource; `accepted`: the policy admits at least one
    of them on its own (so this provider alone would not cause the refusal)."""

    resource: str
    hints: tuple[TopologyHint, ...]
    accepted: bool
    source: str  # "cpu-manager", "memory-manager", "device-manager"


@dataclass(frozen=True)
class AdmissionExplanation:
    policy: TopologyManagerPolicy
    scope: TopologyManagerScope
    providers: tuple[ProviderHints, ...]
    admitted: bool
    merged: TopologyHint | None
    notes: tuple[str, ...] = ()

    @property
    def blocking(self) -> tuple[str, ...]:
        """The resources whose provider has no hint the policy accepts."""
        return tuple(p.resource for p in self.providers if not p.accepted)


def explain_admission(node: NodeSnapshot, pod: PodSpec) -> AdmissionExplanation:
    """The Topology Manager's admission of `pod` on `node`, provider by provider.

    Hints are computed for the pod as a whole (the pod scope's view; under the container
    scope the kubelet asks per container, and a pod refused there is refused here too
    unless its containers would fit in different zones, which the notes say)."""
    policy, scope = kubelet_policy(node)
    numa_ids = sorted(z.numa_id for z in node.zones if z.zone_type == "Node" and z.numa_id >= 0)
    notes = [NOW_NOTE]
    if scope is TopologyManagerScope.CONTAINER and len(pod.containers) > 1:
        notes.append("the node's scope is container: hints shown for the pod as a whole")
    providers = _providers(node, pod, numa_ids, notes)
    if policy is TopologyManagerPolicy.NONE or not numa_ids:
        return AdmissionExplanation(policy, scope, providers, True, None, tuple(notes))
    providers = tuple(
        ProviderHints(p.resource, p.hints, _admits(policy, numa_ids, p.hints), p.source)
        for p in providers
    )
    merged, admitted = merge_hints(
        hints_by_resource({p.resource: list(p.hints) for p in providers}), numa_ids, policy
    )
    if not admitted and all(p.accepted for p in providers):
        notes.append(DISAGREE_NOTE)
    return AdmissionExplanation(policy, scope, providers, admitted, merged, tuple(notes))


def _admits(policy: str, numa_ids: list[int], hints: tuple[TopologyHint, ...]) -> bool:
    """Whether the policy admits a pod whose only provider gave `hints`."""
    return merge_hints(hints_by_resource({"one": list(hints)}), numa_ids, policy)[1]


def _providers(
    node: NodeSnapshot, pod: PodSpec, numa_ids: list[int], notes: list[str]
) -> tuple[ProviderHints, ...]:
    providers = []
    cpu = _cpu_provider(node, pod, numa_ids, notes)
    if cpu is not None:
        providers.append(cpu)
    providers.extend(_memory_providers(node, pod, numa_ids, notes))
    for resource, amount in sorted(pod_request(pod).items()):
        if resource in UNALIGNED or amount <= 0 or is_memory_resource(resource):
            continue
        free, total = _zone_amounts(node, resource, numa_ids)
        if not total:
            notes.append(f"{resource}: the NRT publishes no per-zone amounts; no hints shown")
            continue
        hints = tuple(resource_hints(free, total, amount))
        providers.append(ProviderHints(resource, hints, True, "device-manager"))
    return tuple(providers)


def _memory_providers(
    node: NodeSnapshot, pod: PodSpec, numa_ids: list[int], notes: list[str]
) -> list[ProviderHints]:
    """The Static Memory Manager's pod hints, one provider per memory resource; none
    for a pod it does not align, under the None policy, or where no NUMA set holds the
    pod (it then has no preference: the notes say so)."""
    if not memory_aligned(pod):
        return []  # Guaranteed pods only, and none setting pod-level resources
    policy, why = memory_manager_policy(node)
    if policy is MemoryManagerPolicy.NONE:
        notes.append(MEMORY_NONE_NOTE)
        return []
    state, state_notes = machine_state(node)
    notes.extend(n for n in state_notes if n not in notes)
    if state is None:
        return []
    if policy is None:
        notes.append(MEMORY_NOTE if why == POLICY_NOT_PUBLISHED else f"{why}; {MEMORY_NOTE}")
    hints = StaticPolicy(state.with_numa_ids(numa_ids)).pod_hints(pod)
    if not hints:
        notes.append(NO_MEMORY_HINTS_NOTE)
        return []
    return [
        ProviderHints(resource, tuple(found), True, "memory-manager")
        for resource, found in sorted(hints.items())
    ]


def _cpu_provider(
    node: NodeSnapshot, pod: PodSpec, numa_ids: list[int], notes: list[str]
) -> ProviderHints | None:
    """The static CPU manager's hints for the pod's exclusive CPUs: over the node's CPU
    table when it publishes one, else over the NRT zones' available CPUs (the same masks
    for CPUs that any core can hold). None when it gives no preference: not a
    Guaranteed pod with whole CPUs, or a kubelet known not to run the static policy."""
    count = pod_guaranteed_cpus(pod) if pod.qos_class is QoSClass.GUARANTEED else 0
    if count == 0:
        return None
    if node.cpu_manager_policy not in ("", "static"):
        notes.append(f"cpu: the CPU manager policy is {node.cpu_manager_policy}; no CPU hints")
        return None
    if node.cpus and node.cpu_manager_policy == "static":
        try:
            options = static_options(node.cpu_manager_options)
        except ValueError as error:
            notes.append(f"cpu: {error}")
            return None
        topology = CPUTopology.from_cpus(node.cpus)
        free_cpus = topology.cpus() - pinned_cpus(node) - node.kubelet_reserved_cpus
        hints = cpu_hints(topology, free_cpus, count, options=options)
        return ProviderHints("cpu", tuple(hints), True, "cpu-manager")
    free, total = _zone_amounts(node, "cpu", numa_ids)
    if not total:
        notes.append("cpu: no CPU table and no per-zone CPUs published; no CPU hints")
        return None
    notes.append(
        "cpu: hints from the NRT zones' available CPUs (the node publishes no CPU table; "
        "the static policy is assumed)"
    )
    hints = resource_hints(free, total, count * 1000)
    return ProviderHints("cpu", tuple(hints), True, "cpu-manager")


def _zone_amounts(
    node: NodeSnapshot, resource: str, numa_ids: list[int]
) -> tuple[dict[int, int], dict[int, int]]:
    """(available, allocatable) per NUMA zone that publishes `resource`."""
    free: dict[int, int] = {}
    total: dict[int, int] = {}
    for zone in node.zones:
        if zone.numa_id in numa_ids and resource in zone.resources:
            free[zone.numa_id] = max(zone.resources[resource].available, 0)
            total[zone.numa_id] = max(zone.resources[resource].allocatable, 0)
    return free, total
