"""What is kept of the kubelet's answers between questions: the one place its caches live.

The kubelet's reference (`kubelet/reference/`) never imports this module. Here are the
keys under which nodes and pods alike in everything `kubelet_pinning` reads share one
answer, each distinct CPU table's topology, built once, and each machine's NUMA masks
with their hints (`numa_mask_table`, which `kubelet.fast.hints` counts on).
"""

from __future__ import annotations

from collections.abc import Hashable
from functools import lru_cache
from typing import NamedTuple

from scheduler_api.engine.kubelet.reference.admission import (
    admission_order,
    pod_guaranteed_cpus,
)
from scheduler_api.engine.kubelet.reference.bitmask import NUMAMask, iterate_masks
from scheduler_api.engine.kubelet.reference.cpu_topology import CPUTopology
from scheduler_api.engine.kubelet.reference.memory_state import (
    node_memory,
)
from scheduler_api.engine.kubelet.reference.memorymanager import (
    container_memory_requests,
)
from scheduler_api.engine.kubelet.reference.node_config import (
    allowed_numa_nodes,
    pinned_cpus,
    prefers_closest_numa_nodes,
    published_tm_options,
    published_topology_manager,
)
from scheduler_api.engine.kubelet.reference.topologymanager import TopologyHint
from scheduler_api.engine.model.kubernetes import pod_level_resources_set
from scheduler_api.engine.model.snapshot import NodeSnapshot, PodSpec

__all__ = [
    "MaskRow",
    "clear",
    "kubelet_node_key",
    "kubelet_pod_key",
    "node_shared_topology",
    "numa_mask_table",
    "shared_cpu_topology",
]


@lru_cache(maxsize=256)
def shared_cpu_topology(
    rows: tuple[tuple[int, int, int, int], ...], uncore: tuple[tuple[int, int], ...] = ()
) -> CPUTopology:
    """`CPUTopology.from_cpus(rows, dict(uncore))`, built once per distinct CPU table
    (and uncore cache table, `(cpu, cache)` pairs): nodes of one machine type share it,
    and building one of 768 CPUs costs milliseconds."""
    return CPUTopology.from_cpus(rows, dict(uncore) or None)


def node_shared_topology(node: NodeSnapshot) -> CPUTopology | None:
    """`node_cpu_topology(node)` from the shared ones; None without a CPU table."""
    if not node.cpus:
        return None
    return shared_cpu_topology(node.cpus, _uncore_key(node))


def _uncore_key(node: NodeSnapshot) -> tuple[tuple[int, int], ...]:
    return tuple(sorted(node.uncore_caches.items())) if node.uncore_caches else ()


class MaskRow(NamedTuple):
    """One NUMA mask of a machine: the mask, its NUMA nodes as bits over the positions of
    the machine's sorted NUMA ids (bit i: the i-th id), and its two possible hints
    (`hints[preferred]`), which are immutable and so shared by every answer."""

    mask: NUMAMask
    positions: int
    hints: tuple[TopologyHint, TopologyHint]


@lru_cache(maxsize=64)
def numa_mask_table(numa_ids: tuple[int, ...]) -> tuple[MaskRow, ...]:
    """`iterate_masks(numa_ids)`, in its order, as `MaskRow`s: built once per distinct
    tuple of NUMA ids (a handful per cluster). Building 255 masks and their hints costs
    more than counting CPUs over them, so a hint walk that ran it per call would lose
    most of what counting wins. Value-keyed and bounded; `clear()` empties it."""
    position = {numa: index for index, numa in enumerate(numa_ids)}
    rows = []
    for mask in iterate_masks(numa_ids):
        numa = mask.to_frozenset()
        positions = sum(1 << position[node] for node in numa)
        rows.append(MaskRow(mask, positions, (TopologyHint(numa, False), TopologyHint(numa, True))))
    return tuple(rows)


def kubelet_node_key(node: NodeSnapshot) -> Hashable:
    """What `kubelet_pinning` reads of `node`: nodes with equal keys get equal answers
    (the admission tests hold this against the reference on varied nodes)."""
    closest = prefers_closest_numa_nodes(node)
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
        tuple(sorted(published_tm_options(node).items())),
        allowed_numa_nodes(node),
        tuple(sorted(node.kubelet_feature_gates.items())),
        _uncore_key(node) if "prefer-align-cpus-by-uncorecache" in node.cpu_manager_options else (),
        node.kubelet_reserved_cpus,
        pinned_cpus(node),
        costs,
        node_memory(node),  # the Memory Manager's policy, per-NUMA state, groups and notes
    )


def kubelet_pod_key(pod: PodSpec) -> Hashable:
    """What `kubelet_pinning` reads of `pod`."""
    return (
        pod.qos_class,
        tuple(admission_order(pod)),
        pod_guaranteed_cpus(pod),
        pod_level_resources_set(pod),
        _memory_key(pod),
    )


def _memory_key(pod: PodSpec) -> Hashable:
    """Each container's memory and hugepages requests, in admission order, with what
    the Static Memory Manager reads of it (its name, whether it is a sidecar)."""
    return tuple(
        (c.name, c.restart_policy, tuple(sorted(container_memory_requests(c).items())))
        for c in (*pod.init_containers, *pod.containers)
    )


def clear() -> None:
    """Forget every topology and mask table kept."""
    shared_cpu_topology.cache_clear()
    numa_mask_table.cache_clear()
