"""NRTs as crane-agent publishes them (topology.crane.io/v1alpha1): no `available`."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from .capacity import KUBE_RESERVED_MEMORY
from .ledger import NodeLedger, ZoneLedger
from .meta import NODES_CREATED, DemoContext
from .nrt_common import NRT_KIND, node_owner_reference, zone_costs
from .quantity import CPU, MEMORY, format_kib, format_memory


def _zone_resources(zone: ZoneLedger) -> dict[str, Any]:
    def listing(amounts: dict[str, int]) -> dict[str, str]:
        return {"cpu": str(amounts[CPU] // 1000), "memory": format_kib(amounts[MEMORY])}

    resources: dict[str, Any] = {
        "capacity": listing(zone.capacity),
        "allocatable": listing(zone.allocatable),
    }
    reserved_cpus = (zone.capacity[CPU] - zone.allocatable[CPU]) // 1000
    if reserved_cpus:
        resources["reservedCPUNums"] = reserved_cpus
    return resources


def render_crane_nrt(ctx: DemoContext, ledger: NodeLedger, node_uid: str) -> dict[str, Any]:
    plan = ledger.plan
    created = NODES_CREATED + timedelta(days=1, minutes=plan.index)
    meta = ctx.metadata(
        plan.name, created, owner_references=[node_owner_reference(ledger, node_uid)]
    )
    aware = plan.crane_awareness != "false"
    return {
        "apiVersion": "topology.crane.io/v1alpha1",
        "kind": NRT_KIND,
        "metadata": meta,
        # The kubelet runs cpuManagerPolicy none, so crane-agent manages cpusets: Static.
        "craneManagerPolicy": {
            "cpuManagerPolicy": "Static",
            "topologyManagerPolicy": "SingleNUMANodePodLevel" if aware else "None",
        },
        "reserved": {
            "cpu": str(plan.shape.kube_reserved_cpus),
            "memory": format_memory(KUBE_RESERVED_MEMORY),
        },
        "attributes": {"go.crane.io/reserved-system-cpus": ""},
        "zones": [
            {
                "name": f"node{zone.index}",
                "type": "Node",
                "costs": zone_costs(ledger, zone.index, "node{}"),
                "resources": _zone_resources(zone),
            }
            for zone in ledger.zones
        ],
    }
