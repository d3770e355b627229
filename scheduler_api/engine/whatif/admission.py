"""The second stage of a verdict: would the kubelet admit a pod its scheduler bound?

A scheduler binds a pod to a node; the kubelet then admits it or rejects it
(`TopologyAffinityError`, `SMTAlignmentError`, a static policy that does not start).
A real scheduler does not see that refusal coming and keeps sending pods there, so a
what-if must say both: the scheduler's verdict and the kubelet's. "Fits" is both.

The kubelet's static CPU manager and Topology Manager decide the cpuset behind
schedulers that pick no CPUs (scheduler-plugins, the default scheduler): that is
`whatif_kubelet.kubelet_pinning`, the reference this stage reads. Behind crane-scheduler
and koord-scheduler, crane-agent and koordlet pin the CPUs their scheduler chose; the
kubelet's own admission there is not modelled and the answer says so.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Hashable
from dataclasses import dataclass
from functools import lru_cache

from scheduler_api.engine.kubelet.reference.admission import (
    KUBELET_MODELLED,
    KUBELET_NONE,
    PREFER_CLOSEST_ATTRIBUTE,
    PREFER_CLOSEST_OPTION,
    KubeletPinning,
    admission_order,
    exclusive_cpu_count,
    kubelet_class,
    kubelet_pinning,
    pinned_cpus,
    pod_guaranteed_cpus,
)
from scheduler_api.engine.kubelet.reference.cpu_topology import CPUTopology
from scheduler_api.engine.model.snapshot import NodeSnapshot, PodSpec, QoSClass
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


@lru_cache(maxsize=256)
def shared_cpu_topology(rows: tuple[tuple[int, int, int, int], ...]) -> CPUTopology:
    """`CPUTopology.from_cpus(rows)`, built once per distinct CPU table: nodes of one
    machine type share it, and building one of 768 CPUs costs milliseconds."""
    return CPUTopology.from_cpus(rows)


def kubelet_admission(node: NodeSnapshot, pod: PodSpec) -> Admission:
    """The static CPU manager behind the Topology Manager on `node` (`kubelet_pinning`),
    remembered for nodes alike in all it reads (`_ADMISSIONS`)."""
    key = (kubelet_node_key(node), _pod_key(pod))
    with _LOCK:
        kept = _ADMISSIONS.get(key)
        if kept is not None and kept[0] is node.cpus:
            _ADMISSIONS.move_to_end(key)
            return kept[1]
    admission = pinned_admission(node, pod)
    with _LOCK:
        _ADMISSIONS[key] = (node.cpus, admission)
        while len(_ADMISSIONS) > ADMISSIONS_KEPT:
            _ADMISSIONS.popitem(last=False)
    return admission


# Admissions of nodes alike in everything `kubelet_pinning` reads: a cluster's nodes of one
# machine type with the same pinned CPUs and kubelet configuration get one answer. The key
# holds the CPU table by identity (kept alive by the entry, so the id is not reused).
ADMISSIONS_KEPT = 4096
_ADMISSIONS: OrderedDict[Hashable, tuple[object, Admission]] = OrderedDict()
_LOCK = threading.Lock()


def kubelet_node_key(node: NodeSnapshot) -> Hashable:
    """What `kubelet_pinning` reads of `node`: nodes with equal keys get equal answers
    (the admission tests hold this against the reference on varied nodes)."""
    closest = (
        node.tm_options.get(PREFER_CLOSEST_OPTION) == "true"
        or node.nrt_attributes.get(PREFER_CLOSEST_ATTRIBUTE) == "true"
    )
    costs = (
        tuple((z.numa_id, z.zone_type, tuple(sorted(z.costs.items()))) for z in node.zones)
        if closest
        else None
    )
    return (
        id(node.cpus),
        node.cpu_manager_policy,
        tuple(sorted(node.cpu_manager_options.items())),
        node.tm_policy,
        node.tm_scope,
        node.tm_max_numa_nodes,
        resolve_topology_manager(node.topology_policies, node.nrt_attributes),
        node.kubelet_reserved_cpus,
        pinned_cpus(node),
        costs,
    )


def _pod_key(pod: PodSpec) -> Hashable:
    """What `kubelet_pinning` reads of `pod`."""
    return (pod.qos_class, tuple(admission_order(pod)), pod_guaranteed_cpus(pod))


def pinned_admission(node: NodeSnapshot, pod: PodSpec) -> Admission:
    """`kubelet_pinning`'s answer as an Admission (nothing remembered)."""
    topology = shared_cpu_topology(node.cpus) if node.cpus else None
    pinning: KubeletPinning = kubelet_pinning(node, pod, topology=topology)
    if pinning.reason is not None:
        return Admission(False, pinning.reason.message or str(pinning.reason.check))
    return Admission(True, "admitted by the kubelet's static CPU manager", cpuset=pinning.cpuset)


def admission_of(node: NodeSnapshot, pod: PodSpec, system: Scheduler) -> Admission:
    """The kubelet's verdict on `pod` once `system` bound it to `node`."""
    decided = admission_without_pinning(node, pod, system, asks_exclusive_cpus(pod))
    return decided if decided is not None else kubelet_admission(node, pod)
