"""Resolve a node's Topology Manager policy the way each consumer reads it (formats.md §1–§3).

- scheduler-plugins (upstream NRT): defaults none / container / 8, then
  `topologyPolicies[0]` (only the *PodLevel / *ContainerLevel values map),
  then the `topologyManager*` attributes, each taken only when valid.
- crane-scheduler: `craneManagerPolicy.topologyManagerPolicy`
  `SingleNUMANodePodLevel` means single-numa-node at pod scope; anything else none.
- koord-scheduler: a non-empty node label `node.koordinator.sh/numa-topology-policy`
  beats the NRT; from the NRT only `BestEffort`, `Restricted` and
  `SingleNUMANodePodLevel` are recognised, any other value silently means none.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from topology.choices import Flavour, KoordNUMATopologyPolicy
from topology.choices import TopologyManagerPolicy as Policy
from topology.choices import TopologyManagerScope as Scope

DEFAULT_MAX_NUMA_NODES = 8
LIMIT_NUMA_NODES = 1024
KOORD_NUMA_POLICY_LABEL = "node.koordinator.sh/numa-topology-policy"
_OPTION_PREFIX = "topologyManagerOption"

_LEVELLED = {
    "SingleNUMANodePodLevel": (Policy.SINGLE_NUMA_NODE, Scope.POD),
    "SingleNUMANodeContainerLevel": (Policy.SINGLE_NUMA_NODE, Scope.CONTAINER),
    "RestrictedPodLevel": (Policy.RESTRICTED, Scope.POD),
    "RestrictedContainerLevel": (Policy.RESTRICTED, Scope.CONTAINER),
    "BestEffortPodLevel": (Policy.BEST_EFFORT, Scope.POD),
    "BestEffortContainerLevel": (Policy.BEST_EFFORT, Scope.CONTAINER),
}
_KOORD_LABEL = {
    KoordNUMATopologyPolicy.BEST_EFFORT: Policy.BEST_EFFORT,
    KoordNUMATopologyPolicy.RESTRICTED: Policy.RESTRICTED,
    KoordNUMATopologyPolicy.SINGLE_NUMA_NODE: Policy.SINGLE_NUMA_NODE,
}
_KOORD_NRT = {
    "BestEffort": Policy.BEST_EFFORT,
    "Restricted": Policy.RESTRICTED,
    "SingleNUMANodePodLevel": Policy.SINGLE_NUMA_NODE,
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
    policy, scope = (
        _LEVELLED.get(policies[0], (Policy.NONE, Scope.CONTAINER))
        if policies
        else (
            Policy.NONE,
            Scope.CONTAINER,
        )
    )
    if attributes.get("topologyManagerPolicy") in Policy.values:
        policy = Policy(attributes["topologyManagerPolicy"])
    if attributes.get("topologyManagerScope") in Scope.values:
        scope = Scope(attributes["topologyManagerScope"])
    return ResolvedPolicy(
        policy=policy,
        scope=scope,
        max_numa_nodes=_max_numa_nodes(attributes.get("topologyManagerMaxNUMANodes")),
        options={k: v for k, v in attributes.items() if k.startswith(_OPTION_PREFIX)},
    )


def _max_numa_nodes(raw: str | None) -> int:
    try:
        value = int(raw) if raw is not None else DEFAULT_MAX_NUMA_NODES
    except ValueError:
        return DEFAULT_MAX_NUMA_NODES
    if value <= 1:
        return DEFAULT_MAX_NUMA_NODES
    return min(value, LIMIT_NUMA_NODES)


def resolve_crane(crane_topology_policy: str) -> ResolvedPolicy:
    if crane_topology_policy == "SingleNUMANodePodLevel":
        return ResolvedPolicy(Policy.SINGLE_NUMA_NODE, Scope.POD)
    return ResolvedPolicy(Policy.NONE, Scope.POD)


def resolve_koordinator(policies: list[str], node_labels: dict[str, str]) -> ResolvedPolicy:
    label = node_labels.get(KOORD_NUMA_POLICY_LABEL, "")
    if label:
        return ResolvedPolicy(_KOORD_LABEL.get(label, Policy.NONE), Scope.POD)
    nrt_value = policies[0] if policies else ""
    return ResolvedPolicy(_KOORD_NRT.get(nrt_value, Policy.NONE), Scope.POD)
