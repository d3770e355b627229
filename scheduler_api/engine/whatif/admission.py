"""The second stage of a verdict: would the kubelet admit a pod its scheduler bound?

A scheduler binds a pod to a node; the kubelet then admits it or rejects it
(`TopologyAffinityError`, `SMTAlignmentError`, a static policy that does not start).
A real scheduler does not see that refusal coming and keeps sending pods there, so a
what-if must say both: the scheduler's verdict and the kubelet's. "Fits" is both.

The kubelet's static CPU manager and Topology Manager decide the cpuset behind
schedulers that pick no CPUs (scheduler-plugins, the default scheduler): that is
`kubelet.reference.admission.kubelet_pinning`, the reference this stage reads, given
the counted CPU hints (`kubelet.fast.hints.cpu_hints_counted`, the same hints as the
reference's `cpu_hints` without its walk of every CPU for every NUMA mask). Behind
crane-scheduler and koord-scheduler, crane-agent and koordlet pin the CPUs their
scheduler chose; the kubelet's own admission there is not modelled and the answer says
so.
"""

from __future__ import annotations

from dataclasses import dataclass

from scheduler_api.engine.kubelet.fast.hints import cpu_hints_counted
from scheduler_api.engine.kubelet.reference.admission import (
    KUBELET_MODELLED,
    KUBELET_NONE,
    KubeletPinning,
    exclusive_cpu_count,
    kubelet_class,
    kubelet_pinning,
)
from scheduler_api.engine.kubelet.reference.cpu_topology import CPUTopology
from scheduler_api.engine.model.snapshot import NodeSnapshot, PodSpec, QoSClass
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


NO_EXCLUSIVE_CPUS = Admission(
    True, "no exclusive CPUs asked: the CPU manager pins nothing and the Topology Manager admits it"
)
CPU_MANAGER_NONE = Admission(
    True, "the kubelet's CPU manager policy is none: it pins nothing and admits the pod"
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


def admission_without_pinning(
    node: NodeSnapshot, pod: PodSpec, system: Scheduler, exclusive: bool
) -> Admission | None:
    """The admission of a bound pod decided without running the CPU manager; None when
    `kubelet_admission` must run it."""
    if system not in KUBELET_PINS:
        return AGENT_PINS[system]
    if not exclusive:
        return NO_EXCLUSIVE_CPUS
    known = kubelet_class(node)
    if known == KUBELET_NONE:
        return CPU_MANAGER_NONE
    return None if known == KUBELET_MODELLED else NO_CPU_LAYOUT


def pinned_admission(
    node: NodeSnapshot, pod: PodSpec, topology: CPUTopology | None = None
) -> Admission:
    """`kubelet_pinning`'s answer as an Admission (nothing remembered); `topology` is
    the node's CPU topology when the caller has it built already. The CPU hints are
    counted (`cpu_hints_counted`): on an 8-NUMA node the reference's walk of every CPU
    for each of 255 masks was most of a what-if's time."""
    if topology is None and node.cpus:
        topology = CPUTopology.from_cpus(node.cpus)
    pinning: KubeletPinning = kubelet_pinning(node, pod, topology=topology, hints=cpu_hints_counted)
    if pinning.reason is not None:
        return Admission(False, pinning.reason.message or str(pinning.reason.check))
    return Admission(True, "admitted by the kubelet's static CPU manager", cpuset=pinning.cpuset)
