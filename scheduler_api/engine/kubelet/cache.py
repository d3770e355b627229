"""What is kept of the kubelet's answers between questions: the one place its caches live.

The kubelet's reference (`kubelet/reference/`) never imports this module. Here are the
keys under which nodes and pods alike in everything `kubelet_pinning` reads share one
answer, and each distinct CPU table's topology, built once.
"""

from __future__ import annotations

from collections.abc import Hashable
from functools import lru_cache

from scheduler_api.engine.kubelet.reference.admission import (
    PREFER_CLOSEST_ATTRIBUTE,
    PREFER_CLOSEST_OPTION,
    admission_order,
    pinned_cpus,
    pod_guaranteed_cpus,
    published_topology_manager,
)
from scheduler_api.engine.kubelet.reference.cpu_topology import CPUTopology
from scheduler_api.engine.model.snapshot import NodeSnapshot, PodSpec

__all__ = ["clear", "kubelet_node_key", "kubelet_pod_key", "shared_cpu_topology"]


@lru_cache(maxsize=256)
def shared_cpu_topology(rows: tuple[tuple[int, int, int, int], ...]) -> CPUTopology:
    """`CPUTopology.from_cpus(rows)`, built once per distinct CPU table: nodes of one
    machine type share it, and building one of 768 CPUs costs milliseconds."""
    return CPUTopology.from_cpus(rows)


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
        published_topology_manager(node),
        node.kubelet_reserved_cpus,
        pinned_cpus(node),
        costs,
    )


def kubelet_pod_key(pod: PodSpec) -> Hashable:
    """What `kubelet_pinning` reads of `pod`."""
    return (pod.qos_class, tuple(admission_order(pod)), pod_guaranteed_cpus(pod))


def clear() -> None:
    """Forget every topology kept."""
    shared_cpu_topology.cache_clear()
