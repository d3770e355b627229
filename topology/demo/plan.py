"""Which node gets which hardware, NRT flavour, kubelet policy and labels.

The plan depends on the node count only, so node names and roles are stable for a
given `nodes`; the seed only changes what runs on them.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from enum import StrEnum

from scheduler_api.engine import Flavour
from scheduler_api.engine import TopologyManagerPolicy as TopologyPolicy
from scheduler_api.engine import TopologyManagerScope as TopologyScope

from .hardware import FAMILIES, FAMILY_WEIGHTS, HardwareShape

MIN_NODES = len(FAMILIES)


class NodeReservation(StrEnum):
    """Shapes of the `node.koordinator.sh/reservation` node annotation we emit."""

    NONE = "none"
    CPUS = "cpus"
    CPUS_ONLY = "cpus-reserved-only"
    COUNT = "count"


@dataclass(frozen=True)
class KubeletTopology:
    policy: TopologyPolicy
    scope: TopologyScope

    @property
    def nrt_policy(self) -> str:
        """The deprecated `topologyPolicies[0]` value an exporter derives from the kubelet."""
        prefix = {
            TopologyPolicy.SINGLE_NUMA_NODE: "SingleNUMANode",
            TopologyPolicy.RESTRICTED: "Restricted",
            TopologyPolicy.BEST_EFFORT: "BestEffort",
        }.get(self.policy)
        if prefix is None:
            return "None"
        return prefix + ("PodLevel" if self.scope == TopologyScope.POD else "ContainerLevel")


@dataclass(frozen=True)
class KoordinatorSetup:
    kubelet_static: bool
    allocate_strategy: str | None
    numa_policy: str | None
    bind_policy: str | None
    reservation: NodeReservation
    system_qos: bool


@dataclass(frozen=True)
class NodePlan:
    index: int
    name: str
    shape: HardwareShape
    flavour: Flavour
    topology: KubeletTopology
    zone_label: str
    crane_awareness: str | None = None
    koordinator: KoordinatorSetup | None = None
    # Feature nodes (`features.feature_plans`): the kubelet runs the Static Memory Manager
    # with hugepages pools; the DRA CPU driver publishes each CPU's uncore cache.
    memory_manager: bool = False
    uncore_caches: bool = False


_SNN_POD = KubeletTopology(TopologyPolicy.SINGLE_NUMA_NODE, TopologyScope.POD)
_RESTRICTED = KubeletTopology(TopologyPolicy.RESTRICTED, TopologyScope.CONTAINER)
_BEST_EFFORT = KubeletTopology(TopologyPolicy.BEST_EFFORT, TopologyScope.CONTAINER)
_NONE = KubeletTopology(TopologyPolicy.NONE, TopologyScope.CONTAINER)
UPSTREAM_TOPOLOGIES = (_SNN_POD, _RESTRICTED, _BEST_EFFORT, _NONE)

# Flavour cycle per family; the first entries cover every flavour with four nodes.
# GPU nodes publish through NFD only: Crane and koordlet zones carry no device counts.
_FLAVOURS: dict[str, tuple[Flavour, ...]] = {
    "intel-2s": (
        Flavour.UPSTREAM_V1ALPHA2,
        Flavour.CRANE,
        Flavour.KOORDINATOR,
        Flavour.UPSTREAM_V1ALPHA1,
    ),
    "epyc-nps4": (Flavour.KOORDINATOR, Flavour.CRANE, Flavour.UPSTREAM_V1ALPHA2),
    "small": (
        Flavour.CRANE,
        Flavour.KOORDINATOR,
        Flavour.UPSTREAM_V1ALPHA1,
        Flavour.UPSTREAM_V1ALPHA2,
    ),
    "gpu": (Flavour.UPSTREAM_V1ALPHA1, Flavour.UPSTREAM_V1ALPHA2),
}

_KOORDINATOR_SETUPS = (
    KoordinatorSetup(
        False, "LeastAllocated", "SingleNUMANode", None, NodeReservation.CPUS_ONLY, False
    ),
    KoordinatorSetup(True, "MostAllocated", None, "FullPCPUsOnly", NodeReservation.CPUS, False),
    KoordinatorSetup(False, None, "Restricted", "SpreadByPCPUs", NodeReservation.COUNT, True),
    KoordinatorSetup(True, None, None, None, NodeReservation.NONE, False),
)
_KOORDINATOR_TOPOLOGIES = (_NONE, _SNN_POD, _NONE, _BEST_EFFORT)
_CRANE_AWARENESS = ("true", "false", None)


def family_counts(nodes: int) -> dict[str, int]:
    """One node per family, the rest split by weight (largest remainder, ties by order)."""
    if nodes < MIN_NODES:
        raise ValueError(
            f"nodes must be at least {MIN_NODES}: the demo needs one node of each hardware "
            f"shape ({', '.join(FAMILIES)}), and those four also carry the four NRT flavours"
        )
    extra = nodes - MIN_NODES
    shares = {family: extra * weight for family, weight in FAMILY_WEIGHTS.items()}
    counts = {family: 1 + int(share) for family, share in shares.items()}
    by_remainder = sorted(FAMILIES, key=lambda family: -(shares[family] % 1))
    for family in by_remainder[: nodes - sum(counts.values())]:
        counts[family] += 1
    return counts


def plan_nodes(nodes: int) -> list[NodePlan]:
    counts = family_counts(nodes)
    order = [
        (family, ordinal)
        for ordinal in range(max(counts.values()))
        for family in FAMILIES
        if ordinal < counts[family]
    ]
    plans: list[NodePlan] = []
    seen = {flavour: 0 for flavour in Flavour}
    for index, (family, ordinal) in enumerate(order):
        flavour = _FLAVOURS[family][ordinal % len(_FLAVOURS[family])]
        width = max(2, len(str(counts[family])))
        plans.append(_plan(index, family, ordinal, width, flavour, seen[flavour]))
        seen[flavour] += 1
    return plans


def _plan(
    index: int, family: str, ordinal: int, width: int, flavour: Flavour, nth: int
) -> NodePlan:
    """The nth node of its flavour cycles through that flavour's policies and setups."""
    skus = FAMILIES[family]
    plan = NodePlan(
        index=index,
        name=f"{family}-{ordinal + 1:0{width}d}",
        # Shift the SKU cycle every round of flavours, so each SKU meets every flavour.
        shape=skus[(ordinal + ordinal // len(_FLAVOURS[family])) % len(skus)],
        flavour=flavour,
        topology=UPSTREAM_TOPOLOGIES[nth % len(UPSTREAM_TOPOLOGIES)],
        zone_label=f"zone-{'abc'[index % 3]}",
    )
    if flavour == Flavour.KOORDINATOR:
        setup = _KOORDINATOR_SETUPS[nth % len(_KOORDINATOR_SETUPS)]
        topology = _KOORDINATOR_TOPOLOGIES[nth % len(_KOORDINATOR_TOPOLOGIES)]
        return replace(plan, topology=topology, koordinator=setup)
    if flavour == Flavour.CRANE:
        awareness = _CRANE_AWARENESS[nth % len(_CRANE_AWARENESS)]
        return replace(plan, topology=_NONE, crane_awareness=awareness)
    return plan
