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
    PREFER_CLOSEST_ATTRIBUTE,
    PREFER_CLOSEST_OPTION,
    admission_order,
    pinned_cpus,
    pod_guaranteed_cpus,
    published_topology_manager,
)
from scheduler_api.engine.kubelet.reference.bitmask import NUMAMask, iterate_masks
from scheduler_api.engine.kubelet.reference.cpu_topology import CPUTopology
from scheduler_api.engine.kubelet.reference.topologymanager import TopologyHint
from scheduler_api.engine.model.snapshot import NodeSnapshot, PodSpec

__all__ = [
    "MaskRow",
    "clear",
    "kubelet_node_key",
    "kubelet_pod_key",
    "numa_mask_table",
    "shared_cpu_topology",
]


@lru_cache(maxsize=256)
def shared_cpu_topology(rows: tuple[tuple[int, int, int, int], ...]) -> CPUTopology:
    """`CPUTopology.from_cpus(rows)`, built once per distinct CPU table: nodes of one
    machine type share it, and building one of 768 CPUs costs milliseconds."""
    return CPUTopology.from_cpus(rows)


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
    """Forget every topology and mask table kept."""
    shared_cpu_topology.cache_clear()
    numa_mask_table.cache_clear()
