"""Resolve a node's Topology Manager policy the way each consumer reads it (formats.md §1–§3).

- scheduler-plugins (upstream NRT): defaults none / container / 8, then
  `topologyPolicies[0]` (only the *PodLevel / *ContainerLevel values map),
  then the `topologyManager*` attributes, each taken only when valid.
- crane-scheduler: `craneManagerPolicy.topologyManagerPolicy`
  `SingleNUMANodePodLevel` means single-numa-node at pod scope; anything else none.
- koord-scheduler: a non-empty node label `node.koordinator.sh/numa-topology-policy`
  beats the NRT; from the NRT only `BestEffort`, `Restricted` and
  `SingleNUMANodePodLevel` are recognised, any other value silently means none.

The scheduler-plugins and Koordinator rules live in the engine; this module
only maps their answers onto the mirror's fields.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from scheduler_api.engine import NUMATopologyPolicy, nrt_numa_policy, resolve_topology_manager
from topology.choices import Flavour
from topology.choices import TopologyManagerPolicy as Policy
from topology.choices import TopologyManagerScope as Scope

DEFAULT_MAX_NUMA_NODES = 8
KOORD_NUMA_POLICY_LABEL = "node.koordinator.sh/numa-topology-policy"
_OPTION_PREFIX = "topologyManagerOption"

# Koordinator's NUMA policy names → the kubelet-style names the mirror stores.
_KOORD_TO_TM = {
    NUMATopologyPolicy.BEST_EFFORT: Policy.BEST_EFFORT,
    NUMATopologyPolicy.RESTRICTED: Policy.RESTRICTED,
    NUMATopologyPolicy.SINGLE_NUMA_NODE: Policy.SINGLE_NUMA_NODE,
}


@dataclass(frozen=True)
class ResolvedPolicy:
    policy: str = Policy.NONE
    scope: str = Scope.CONTAINER
    max_numa_nodes: int = DEFAULT_MAX_NUMA_NODES
    options: dict[str, str] = field(default_factory=dict)


def resolve_policy(
    flavour: str,
    *,
    topology_policies: list[str],
    attributes: dict[str, str],
    crane_topology_policy: str = "",
    node_labels: dict[str, str] | None = None,
) -> ResolvedPolicy:
    if flavour == Flavour.CRANE:
        return resolve_crane(crane_topology_policy)
    if flavour == Flavour.KOORDINATOR:
        return resolve_koordinator(topology_policies, node_labels or {})
    return resolve_scheduler_plugins(topology_policies, attributes)


def resolve_scheduler_plugins(policies: list[str], attributes: dict[str, str]) -> ResolvedPolicy:
    """The engine's scheduler-plugins resolution, plus the options the mirror keeps."""
    config = resolve_topology_manager(policies, attributes)
    return ResolvedPolicy(
        policy=config.policy.value,
        scope=config.scope.value,
        max_numa_nodes=config.max_numa_nodes,
        options={k: v for k, v in attributes.items() if k.startswith(_OPTION_PREFIX)},
    )


def resolve_crane(crane_topology_policy: str) -> ResolvedPolicy:
    if crane_topology_policy == "SingleNUMANodePodLevel":
        return ResolvedPolicy(Policy.SINGLE_NUMA_NODE, Scope.POD)
    return ResolvedPolicy(Policy.NONE, Scope.POD)


def resolve_koordinator(policies: list[str], node_labels: dict[str, str]) -> ResolvedPolicy:
    """A non-empty label wins; otherwise the engine's reading of the NRT list."""
    koord_policy = node_labels.get(KOORD_NUMA_POLICY_LABEL, "") or nrt_numa_policy(policies)
    return ResolvedPolicy(_KOORD_TO_TM.get(koord_policy, Policy.NONE), Scope.POD)
