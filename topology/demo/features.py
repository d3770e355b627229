"""Which nodes show the kubelet features a new user should meet in the demo.

Chosen from the plan alone (so by the node count), on nodes the fleet already has: the
choice draws nothing from the demo's random generators.

- The Memory Manager node (`NodePlan.memory_manager`): the first upstream v1alpha2 node
  (its NRT carries attributes, where `memoryManagerPolicy` is read) with several NUMA
  zones under single-numa-node, other than the DRA GPU node; a fleet too small to have
  one uses the DRA GPU node itself. Single-numa-node keeps every Guaranteed pod's memory
  on one NUMA node, so the zones' published `available` is what the Memory Manager's
  single-NUMA groups hold: no multi-NUMA group goes unpublished.
- The uncore-cache node (`NodePlan.uncore_caches`): the first AMD EPYC node whose kubelet
  runs the static CPU manager. It must be a koordlet node: only koordlet's cpu-topology
  annotation gives Topolens a node's CPU table, and the DRA CPU driver's uncore cache ids
  are read only when they name that table's CPUs. Fleets below 17 nodes have none.
"""

from __future__ import annotations

from dataclasses import replace

from scheduler_api.engine import Flavour
from scheduler_api.engine import TopologyManagerPolicy as TopologyPolicy

from .dra import dra_node
from .hardware import Vendor
from .plan import NodePlan


def feature_plans(plans: list[NodePlan]) -> list[NodePlan]:
    """`plans` with the Memory Manager node and the uncore-cache node marked."""
    memory = memory_manager_node(plans)
    uncore = uncore_cache_node(plans)
    return [
        replace(
            plan,
            memory_manager=plan.name == memory.name,
            uncore_caches=uncore is not None and plan.name == uncore.name,
        )
        for plan in plans
    ]


def memory_manager_node(plans: list[NodePlan]) -> NodePlan:
    gpu_node = dra_node(plans)
    candidates = [
        plan
        for plan in plans
        if plan.flavour == Flavour.UPSTREAM_V1ALPHA2
        and plan.shape.zone_count > 1
        and plan.topology.policy == TopologyPolicy.SINGLE_NUMA_NODE
    ]
    return next((plan for plan in candidates if plan.name != gpu_node.name), gpu_node)


def uncore_cache_node(plans: list[NodePlan]) -> NodePlan | None:
    return next(
        (
            plan
            for plan in plans
            if plan.shape.vendor == Vendor.AMD
            and plan.koordinator is not None
            and plan.koordinator.kubelet_static
        ),
        None,
    )
