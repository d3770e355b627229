"""Mirrors: whatif.judge.Judgement.fill_copy_by_copy.

What-if capacity on a scheduler-plugins node: copies counted per NUMA zone.

The reference fills the node copy by copy: Filter, the kubelet's pinning, assume the
copy (it debits the chosen zone's `available`, as the NRT reads once the topology
exporter has seen the pod start), Filter again. This counts the settled state, not a
burst: scheduler-plugins' own caches differ until the NRT is refreshed (the
OverReserve cache debits every zone, the passthrough cache none). Under
single-numa-node each copy lands whole in one zone (the lowest id where every
requested resource is suitable) and debits only that zone, so zones fill
independently: a zone takes `available // request` copies of each resource the
plugin both checks and debits, and the node takes the sum over zones, within what the
node-level filters allow. Under any other policy the Filter never refuses, so only
the node-level filters count. The kubelet's pinning changes no verdict here.

Counted where this holds: pod scope, or container scope with one app container and
no init containers (the same single request); unique NUMA ids. Elsewhere None: the
caller fills copy by copy.
"""

from __future__ import annotations

from collections.abc import Mapping

from scheduler_api.engine.model.decided import UNLIMITED
from scheduler_api.engine.model.kubernetes import node_fit_count
from scheduler_api.engine.model.snapshot import (
    NodeSnapshot,
    PodSpec,
    QoSClass,
    TopologyManagerPolicy,
    TopologyManagerScope,
)
from scheduler_api.engine.schedulerplugins.reference.common import (
    ALWAYS_ON_NODE,
    VISIBLE_FLAVOURS,
    NUMANode,
    effective_request,
    includes_non_native,
    is_host_level,
    is_numa_affine,
    numa_node_list,
    resolve_topology_manager,
)


def _single_request(node: NodeSnapshot, pod: PodSpec) -> dict[str, int] | None:
    """The one request the Filter aligns, or None when it aligns several in turn."""
    scope = resolve_topology_manager(node.topology_policies, node.nrt_attributes).scope
    if scope is TopologyManagerScope.POD:
        return effective_request(pod)
    if len(pod.containers) == 1 and not pod.init_containers:
        return dict(pod.containers[0].requests)
    return None


def _zone_copies(zone: NUMANode, checked: Mapping[str, int], qos: QoSClass) -> int:
    """Copies `zone` takes before a checked resource runs short (UNLIMITED: never)."""
    copies = UNLIMITED
    for resource, wanted in checked.items():
        if resource not in zone.resources:
            return 0
        if qos is not QoSClass.GUARANTEED and is_numa_affine(resource):
            continue  # always suitable, never debited
        room = zone.resources[resource] // wanted
        copies = room if copies == UNLIMITED else min(copies, room)
    return max(copies, 0) if copies != UNLIMITED else UNLIMITED


def numa_copies(node: NodeSnapshot, request: Mapping[str, int], qos: QoSClass) -> int:
    """Copies the single-numa-node Filter admits one after another (UNLIMITED: no limit)."""
    zones = numa_node_list(node)
    checked: dict[str, int] = {}
    for resource, wanted in request.items():
        if wanted == 0:
            continue
        if resource not in node.allocatable and resource not in ALWAYS_ON_NODE:
            return 0
        if any(resource in zone.resources for zone in zones) or not is_host_level(resource):
            checked[resource] = wanted
    if not checked:
        return UNLIMITED  # every resource skipped: Go's filled mask, always NUMA 0
    counts = [_zone_copies(zone, checked, qos) for zone in zones]
    return UNLIMITED if UNLIMITED in counts else sum(counts)


def fill_count(
    node: NodeSnapshot, pod: PodSpec, request: Mapping[str, int], limit: int
) -> int | None:
    """Copies of `pod` `node` takes alone (at most `limit`); None: fill copy by copy."""
    cap = node_fit_count(node, request, limit)
    tm = resolve_topology_manager(node.topology_policies, node.nrt_attributes)
    unchecked = pod.qos_class is QoSClass.BEST_EFFORT and not includes_non_native(pod)
    if cap == 0 or unchecked or node.flavour not in VISIBLE_FLAVOURS:
        return cap
    if tm.policy is not TopologyManagerPolicy.SINGLE_NUMA_NODE:
        return cap
    numa_ids = [zone.numa_id for zone in numa_node_list(node)]
    aligned = _single_request(node, pod)
    if aligned is None or any(amount < 0 for amount in aligned.values()):
        return None
    if len(set(numa_ids)) != len(numa_ids):
        return None  # duplicate ids: upstream debits every zone of the id
    copies = numa_copies(node, aligned, pod.qos_class)
    return cap if copies == UNLIMITED else min(cap, copies)
