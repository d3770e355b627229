"""scheduler-plugins NodeResourceTopologyMatch: constants, arguments and the per-NUMA view.

Shared by the Filter (`schedulerplugins.reference.match`) and the Score strategies
(`schedulerplugins.reference.scoring`).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from types import MappingProxyType

from scheduler_api.engine.model.snapshot import (
    Flavour,
    NodeSnapshot,
    PodSpec,
    QoSClass,
    TopologyManagerPolicy,
    TopologyManagerScope,
)

MAX_NODE_SCORE = 100
MAX_NUMA_ID = 64  # createNUMANodeList drops ids above this (64 itself would panic upstream)
HIGHEST_NUMA_ID = 8  # normalizeScore divides by this constant, not by maxNUMANodes
MAX_DISTANCE = 255
DEFAULT_MAX_NUMA_NODES = 8
LIMIT_NUMA_NODES = 1024
GO_MIN_INT64 = -(2**63)  # what Go's int64(NaN) yields on amd64
# util.ResourceList(nodeInfo.Allocatable) always carries these keys, even at zero.
ALWAYS_ON_NODE = frozenset({"cpu", "memory", "pods", "ephemeral-storage"})

# NRT flavours the plugin can read: Koordinator's v1alpha1 objects are served as v1alpha2.
VISIBLE_FLAVOURS = frozenset(
    {Flavour.UPSTREAM_V1ALPHA1, Flavour.UPSTREAM_V1ALPHA2, Flavour.KOORDINATOR}
)

POLICY_FROM_LEGACY = {
    "SingleNUMANodePodLevel": ("single-numa-node", "pod"),
    "SingleNUMANodeContainerLevel": ("single-numa-node", "container"),
    "BestEffortPodLevel": ("best-effort", "pod"),
    "BestEffortContainerLevel": ("best-effort", "container"),
    "RestrictedPodLevel": ("restricted", "pod"),
    "RestrictedContainerLevel": ("restricted", "container"),
}


SCOPE_VALUES = frozenset(s.value for s in TopologyManagerScope)
POLICY_VALUES = frozenset(p.value for p in TopologyManagerPolicy)


class ScoringStrategy(StrEnum):
    LEAST_ALLOCATED = "LeastAllocated"
    MOST_ALLOCATED = "MostAllocated"
    BALANCED_ALLOCATION = "BalancedAllocation"
    LEAST_NUMA_NODES = "LeastNUMANodes"


@dataclass(frozen=True, slots=True)
class NRTMatchConfig:
    """NodeResourceTopologyMatchArgs.scoringStrategy (defaults as SetDefaults_...)."""

    scoring_strategy: ScoringStrategy = ScoringStrategy.LEAST_ALLOCATED
    resource_weights: Mapping[str, int] = field(
        default_factory=lambda: MappingProxyType({"cpu": 1, "memory": 1})
    )

    def weight(self, resource: str) -> int:
        """resourceToWeightMap.weight: unknown or non-positive weights count as 1."""
        value = self.resource_weights.get(resource, 1)
        return value if value >= 1 else 1


@dataclass(frozen=True, slots=True)
class TopologyManagerConfig:
    policy: TopologyManagerPolicy = TopologyManagerPolicy.NONE
    scope: TopologyManagerScope = TopologyManagerScope.CONTAINER
    max_numa_nodes: int = DEFAULT_MAX_NUMA_NODES


def resolve_topology_manager(
    topology_policies: Sequence[str], attributes: Mapping[str, str]
) -> TopologyManagerConfig:
    """nodeconfig.TopologyManagerFromNodeResourceTopology: defaults, policies[0], attributes."""
    policy, scope, max_numa = "none", "container", DEFAULT_MAX_NUMA_NODES
    if topology_policies and topology_policies[0] in POLICY_FROM_LEGACY:
        policy, scope = POLICY_FROM_LEGACY[topology_policies[0]]
    if attributes.get("topologyManagerScope") in SCOPE_VALUES:
        scope = attributes["topologyManagerScope"]
    if attributes.get("topologyManagerPolicy") in POLICY_VALUES:
        policy = attributes["topologyManagerPolicy"]
    raw_max = _go_atoi(attributes.get("topologyManagerMaxNUMANodes", ""))
    if raw_max is not None and raw_max > 1:
        max_numa = min(raw_max, LIMIT_NUMA_NODES)
    return TopologyManagerConfig(
        TopologyManagerPolicy(policy), TopologyManagerScope(scope), max_numa
    )


def _go_atoi(text: str) -> int | None:
    """Go's strconv.Atoi on 64 bits: an optional sign and ASCII digits, within int64;
    None where Atoi fails (the attribute is then ignored, as upstream ignores it)."""
    if not _ATOI.fullmatch(text):
        return None
    value = int(text)
    return value if -(2**63) <= value < 2**63 else None


_ATOI = re.compile(r"[+-]?[0-9]+")


@dataclass(slots=True)
class NUMANode:
    """A mutable working copy of one zone (the filter subtracts container requests)."""

    numa_id: int
    resources: dict[str, int]
    costs: Mapping[int, int]


def numa_node_list(node: NodeSnapshot) -> list[NUMANode]:
    """createNUMANodeList: NUMA zones in NRT order, resources = zone `available`."""
    result = []
    for zone in node.zones:
        if zone.zone_type != "Node" or not 0 <= zone.numa_id < MAX_NUMA_ID:
            continue
        available = {name: amounts.available for name, amounts in zone.resources.items()}
        costs = {k: v for k, v in zone.costs.items() if 0 <= k <= MAX_NUMA_ID}
        result.append(NUMANode(zone.numa_id, available, costs))
    return result


# --- resource classification (k8s v1helper) -------------------------------------------


def is_native(resource: str) -> bool:
    return "/" not in resource or "kubernetes.io/" in resource


def is_numa_affine(resource: str) -> bool:
    return resource in ("cpu", "memory") or resource.startswith("hugepages-")


def is_host_level(resource: str) -> bool:
    return resource in ("ephemeral-storage", "storage") or not is_native(resource)


def go_value(resource: str, amount: int) -> int:
    """Quantity.Value(): cpu millicores round up to whole cores; other units are exact."""
    return -(-amount // 1000) if resource == "cpu" else amount


def includes_non_native(pod: PodSpec) -> bool:
    containers = pod.init_containers + pod.containers
    return any(not is_native(r) for c in containers for r in c.requests)


def effective_request(pod: PodSpec) -> dict[str, int]:
    """util.GetPodEffectiveRequest: max(sum of app containers, largest init); no overhead.

    Pod-level resources (spec.resources) are not read: scheduler-plugins 903da7d
    pkg/util/resource.go sums the containers only, though it is built on Kubernetes
    1.35 (whose NodeResourcesFit does read them: `whatif.systems.POD_LEVEL_SUPPORT`)."""
    result: dict[str, int] = {}
    for container in pod.containers:
        for name, amount in container.requests.items():
            result[name] = result.get(name, 0) + amount
    for container in pod.init_containers:
        for name, amount in container.requests.items():
            result[name] = max(result.get(name, amount), amount)
    return result


def suitable(qos: QoSClass, resource: str, wanted: int, numa_amount: int) -> bool:
    """isResourceSetSuitable: non-Guaranteed pods never need exclusive cpu/memory/hugepages."""
    if qos is not QoSClass.GUARANTEED and is_numa_affine(resource):
        return True
    return numa_amount >= wanted
