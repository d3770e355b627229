"""The second stage of a verdict: would the kubelet admit a pod its scheduler bound?

A scheduler binds a pod to a node; the kubelet then admits it or rejects it
(`TopologyAffinityError`, `SMTAlignmentError`, a static policy that does not start).
A real scheduler does not see that refusal coming and keeps sending pods there, so a
what-if must say both: the scheduler's verdict and the kubelet's. "Fits" is both.

The kubelet's static CPU manager and Topology Manager decide the cpuset behind
schedulers that pick no CPUs (scheduler-plugins, the default scheduler): that is
`kubelet.reference.admission.kubelet_pinning`, the reference this stage reads (with the
Static Memory Manager's hints merged in where the node publishes that policy), given
the counted CPU hints (`kubelet.fast.hints.cpu_hints_counted`, the same hints as the
reference's `cpu_hints` without its walk of every CPU for every NUMA mask). Behind
crane-scheduler and koord-scheduler, crane-agent and koordlet pin the CPUs their
scheduler chose; the kubelet's own admission there is not modelled and the answer says
so.
"""

from __future__ import annotations

from dataclasses import dataclass

from scheduler_api.engine.kubelet.fast.hints import cpu_hints_counted
from scheduler_api.engine.kubelet.fast.memory_hints import calculate_hints_counted
from scheduler_api.engine.kubelet.reference.admission import (
    KubeletPinning,
    exclusive_cpu_count,
    kubelet_pinning,
)
from scheduler_api.engine.kubelet.reference.bitmask import MAX_BITS
from scheduler_api.engine.kubelet.reference.cpu_topology import CPUTopology
from scheduler_api.engine.kubelet.reference.memory_state import memory_groups
from scheduler_api.engine.kubelet.reference.memorymanager import is_memory_resource
from scheduler_api.engine.kubelet.reference.node_config import (
    KUBELET_MODELLED,
    KUBELET_NONE,
    kubelet_class,
    kubelet_policy,
    memory_manager_static,
)
from scheduler_api.engine.model.snapshot import (
    NodeSnapshot,
    PodSpec,
    QoSClass,
    TopologyManagerPolicy,
    TopologyManagerScope,
)
from scheduler_api.engine.schedulerplugins.reference.common import resolve_topology_manager
from scheduler_api.engine.whatif.systems import Scheduler

# Systems behind which the kubelet's static CPU manager picks the cpuset.
KUBELET_PINS = frozenset({Scheduler.SCHEDULER_PLUGINS, Scheduler.DEFAULT})

REJECTED_NOTE = (
    "bound, then rejected by the kubelet: the real scheduler would still send pods "
    "here, and each would fail admission"
)


@dataclass(frozen=True, slots=True)
class Admission:
    """The kubelet's verdict on a bound pod.

    `checked` is False where Topolens cannot tell (the node publishes no CPU layout, or
    a node agent pins the CPUs): `admitted` is then True and `reason` says why it is
    not known. `cpuset` is what the static CPU manager would pin, when it pins any.
    """

    admitted: bool
    reason: str
    checked: bool = True
    cpuset: frozenset[int] | None = None
    memory_numa: frozenset[int] | None = None


NO_EXCLUSIVE_CPUS = Admission(
    True, "no exclusive CPUs asked: the CPU manager pins nothing and the Topology Manager admits it"
)
# Where neither manager is reproduced, for a Guaranteed pod (which the Static Memory
# Manager would align): said alike of every such node, whatever it publishes.
# the node's rules say why memory was not aligned (kubelet_rules' memory-manager line);
# the reason, written for every node of an answer, stays short
MEMORY_UNCHECKED = "memory not aligned here (see the node's rules)"
GUARANTEED_NO_EXCLUSIVE_CPUS = Admission(
    True, f"no exclusive CPUs asked: the CPU manager pins nothing; {MEMORY_UNCHECKED}"
)
CPU_MANAGER_NONE = Admission(
    True,
    "the kubelet's CPU manager policy is none: it pins nothing and admits the pod; "
    + MEMORY_UNCHECKED,
)
NO_CPU_LAYOUT = Admission(
    True,
    "not checked: the node publishes neither its CPU layout nor its CPU manager policy "
    "(Koordinator's cpu-topology and kubelet annotations on the NRT)",
    checked=False,
)
AGENT_PINS = {
    Scheduler.CRANE: Admission(
        True, "not checked: crane-agent pins the CPUs crane-scheduler chose", checked=False
    ),
    Scheduler.KOORDINATOR: Admission(
        True, "not checked: koordlet pins the CPUs koord-scheduler chose", checked=False
    ),
}


def asks_exclusive_cpus(pod: PodSpec) -> bool:
    """A Guaranteed pod with a whole-CPU container: the only kind the static policy pins."""
    if pod.qos_class is not QoSClass.GUARANTEED:
        return False
    return any(exclusive_cpu_count(c) for c in (*pod.init_containers, *pod.containers))


def kubelet_aligns(pod: PodSpec) -> bool:
    """Whether the kubelet's CPU or Memory Manager may act on the pod at all: only on a
    Guaranteed one (whole CPUs pinned; memory and hugepages under the Static policy)."""
    return pod.qos_class is QoSClass.GUARANTEED


@dataclass(frozen=True, slots=True)
class KnownKubelet:
    """What `admission_without_pinning` reads of a node and a pod, when the caller keeps
    it worked out already (a what-if's index holds it per node, its pod once)."""

    kubelet_class: int
    memory_static: bool
    exclusive: bool


def admission_without_pinning(
    node: NodeSnapshot,
    pod: PodSpec,
    system: Scheduler,
    aligned: bool,
    known: KnownKubelet | None = None,
) -> Admission | None:
    """The admission of a bound pod decided without running the kubelet's managers
    (`aligned`: `kubelet_aligns(pod)`); None when `kubelet_admission` must run them:
    a Guaranteed pod on a node whose admission `kubelet_pinning` reproduces. `known`:
    the node's `kubelet_class` and `memory_manager_static` and the pod's
    `asks_exclusive_cpus`, when the caller has them (else worked out here)."""
    if system not in KUBELET_PINS:
        return AGENT_PINS[system]
    if not aligned:
        return NO_EXCLUSIVE_CPUS
    if known is None:
        known = KnownKubelet(kubelet_class(node), memory_manager_static(node),
                             asks_exclusive_cpus(pod))  # fmt: skip
    exclusive = known.exclusive
    if known.kubelet_class == KUBELET_MODELLED and (exclusive or known.memory_static):
        return None
    if not exclusive:
        return GUARANTEED_NO_EXCLUSIVE_CPUS
    return CPU_MANAGER_NONE if known.kubelet_class == KUBELET_NONE else NO_CPU_LAYOUT


def pinned_admission(
    node: NodeSnapshot, pod: PodSpec, topology: CPUTopology | None = None
) -> Admission:
    """`kubelet_pinning`'s answer as an Admission (nothing remembered); `topology` is
    the node's CPU topology when the caller has it built already. The CPU hints are
    counted (`cpu_hints_counted`): on an 8-NUMA node the reference's walk of every CPU
    for each of 255 masks was most of a what-if's time."""
    if topology is None and node.cpus:
        topology = CPUTopology.from_cpus(node.cpus, node.uncore_caches or None)
    pinning: KubeletPinning = kubelet_pinning(
        node, pod, topology=topology, hints=cpu_hints_counted, memory_hints=calculate_hints_counted
    )
    said = "".join(f"; {note}" for note in pinning.notes)
    if pinning.reason is not None:
        return Admission(False, (pinning.reason.message or str(pinning.reason.check)) + said)
    if not pinning.checked:
        return Admission(True, "; ".join(pinning.notes), checked=False)
    reason = pinning.note or _admitted_by(pinning)
    return Admission(True, reason + said, cpuset=pinning.cpuset, memory_numa=pinning.memory_numa)


def _admitted_by(pinning: KubeletPinning) -> str:
    """Which of the kubelet's managers admitted the pod, and where its memory went."""
    memory = ""
    if pinning.memory_numa is not None:
        memory = f" (memory on NUMA {', '.join(map(str, sorted(pinning.memory_numa)))})"
    if pinning.cpuset is not None and pinning.memory_numa is not None:
        return f"admitted by the kubelet's static CPU manager and Static Memory Manager{memory}"
    if pinning.cpuset is not None:
        return "admitted by the kubelet's static CPU manager"
    if pinning.memory_numa is not None:
        return f"admitted by the kubelet's Static Memory Manager{memory}"
    return NO_EXCLUSIVE_CPUS.reason


def admits_what_scheduler_plugins_binds(
    node: NodeSnapshot, pod: PodSpec, system: Scheduler
) -> bool:
    """Mirrors: whatif.judge.Judgement.fill_copy_by_copy's kubelet stage (the reference's
    `kubelet_pinning` on every copy), by showing up front that it admits each copy
    scheduler-plugins binds, so the node takes as many copies as the scheduler alone.

    Where it holds: a Guaranteed pod with no whole CPU (the static CPU manager gives no
    hints: only the Static Memory Manager's count) and no init container, one container
    or the pod scope, on a node whose kubelet and NRT both say single-numa-node with the
    same scope. There scheduler-plugins binds a copy only when one NUMA zone holds all it
    asks, memory and hugepages included (`available`). The Memory Manager reads the same
    zones (`memory_state.machine_state`: free = available, within 0..allocatable), and
    with no multi-NUMA group on the node every single-NUMA mask passes its group rule, so
    that zone gives a preferred one-NUMA hint (its allocatable holds the request too):
    the Topology Manager admits, and Allocate finds the memory it counted. A copy neither
    starts a multi-NUMA group (each lands on one NUMA node) nor moves a zone outside
    those bounds (the scheduler debits only what a zone holds). The first copy's own
    admission still runs (`Judgement._admit_all`): a kubelet that refuses it refuses all.
    Anything else (whole CPUs, other policies, groups, a memory resource some NUMA zone
    does not list): False, and the copies are filled one by one.
    """
    if system is not Scheduler.SCHEDULER_PLUGINS or asks_exclusive_cpus(pod):
        return False
    if not kubelet_aligns(pod) or pod.init_containers or not memory_manager_static(node):
        return False
    published = resolve_topology_manager(node.topology_policies, node.nrt_attributes)
    policy, scope = kubelet_policy(node)
    single = TopologyManagerPolicy.SINGLE_NUMA_NODE
    if (published.policy, published.scope) != (policy, scope) or policy is not single:
        return False
    if len(pod.containers) != 1 and scope is not TopologyManagerScope.POD:
        return False
    return _zones_read_alike(node, pod) and not memory_groups(node)[0]


def _zones_read_alike(node: NodeSnapshot, pod: PodSpec) -> bool:
    """Every NUMA zone is one the Memory Manager reads (a distinct id under 64, of type
    Node) and lists each memory resource the pod asks, with 0 <= available <=
    allocatable: the amounts scheduler-plugins compares are the Memory Manager's."""
    asked = {
        name
        for container in pod.containers
        for name, amount in container.requests.items()
        if amount and is_memory_resource(name)
    }
    seen: set[int] = set()
    for zone in node.zones:
        if zone.numa_id < 0:
            continue
        if zone.zone_type != "Node" or zone.numa_id in seen or zone.numa_id >= MAX_BITS:
            return False
        seen.add(zone.numa_id)
        for name in asked:
            amounts = zone.resources.get(name)
            if amounts is None or not 0 <= amounts.available <= amounts.allocatable:
                return False
    return bool(seen)
