"""NRTs as koordlet publishes them: v1alpha1, available == allocatable, and the CPU
picture in annotations (topology, shared pools, kubelet-pinned pods, reservations)."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from topology.parsers.cpulist import format_cpulist

from .koordinator import KoordinatorNode, compact_json
from .meta import NODES_CREATED, DemoContext
from .nodes import node_reservation_annotation
from .nrt_common import NRT_KIND, node_owner_reference
from .quantity import BATCH_CPU, BATCH_MEMORY, CPU, MEMORY, format_kib

# The static policy's option the uncore-cache node runs (`features.uncore_cache_node`).
UNCORE_OPTION = "prefer-align-cpus-by-uncorecache"
_ZONE_RESOURCES = ("cpu", "hugepages-1Gi", "hugepages-2Mi", BATCH_CPU, BATCH_MEMORY, "memory")


def render_koordinator_nrt(
    ctx: DemoContext, knode: KoordinatorNode, node_uid: str
) -> dict[str, Any]:
    ledger = knode.ledger
    plan = ledger.plan
    created = NODES_CREATED + timedelta(days=1, minutes=plan.index)
    meta = ctx.metadata(
        plan.name,
        created,
        labels={"app.kubernetes.io/managed-by": "Koordinator"},
        annotations=koordlet_annotations(knode),
        owner_references=[node_owner_reference(ledger, node_uid)],
    )
    return {
        "apiVersion": "topology.node.k8s.io/v1alpha1",
        "kind": NRT_KIND,
        "metadata": meta,
        "topologyPolicies": [plan.topology.nrt_policy],
        "zones": [
            {
                "name": f"node-{zone.index}",
                "type": "Node",
                "resources": _zone_resources(knode, zone.index),
            }
            for zone in ledger.zones
        ],
    }


def batch_split(total: int, zones: int) -> list[int]:
    """koord-manager spreads batch resources evenly over zones; zone 0 takes the remainder."""
    share = total // zones
    return [share + (total - share * zones if zone == 0 else 0) for zone in range(zones)]


def _zone_resources(knode: KoordinatorNode, index: int) -> list[dict[str, str]]:
    ledger = knode.ledger
    zone = ledger.zones[index]
    zones = len(ledger.zones)
    values = {
        "cpu": str(zone.allocatable[CPU] // 1000),
        "hugepages-1Gi": "0",
        "hugepages-2Mi": "0",
        BATCH_CPU: str(batch_split(ledger.capacity.get(BATCH_CPU, 0), zones)[index]),
        BATCH_MEMORY: str(batch_split(ledger.capacity.get(BATCH_MEMORY, 0), zones)[index]),
        "memory": format_kib(zone.allocatable[MEMORY]),
    }
    # koordlet publishes available == allocatable; the scheduler does the accounting.
    return [
        {
            "name": name,
            "capacity": values[name],
            "allocatable": values[name],
            "available": values[name],
        }
        for name in _ZONE_RESOURCES
    ]


def shared_pools(knode: KoordinatorNode, *, batch: bool) -> list[dict[str, Any]]:
    """LS pool: all − LSE − LSR − kubelet-pinned − node-reserved − exclusive system QoS.
    The BE pool keeps LSR CPUs (BE may borrow them)."""
    shape = knode.ledger.plan.shape
    pinned = {cpu for _, cpus in knode.pinned for cpu in cpus}
    taken = knode.lse | pinned | knode.cpus.annotation_reserved | knode.cpus.system_qos
    if not batch:
        taken |= knode.lsr
    pools = []
    for zone in range(shape.zone_count):
        cpus = [cpu for cpu in shape.zone_cpus(zone) if cpu not in taken]
        if cpus:
            pools.append(
                {"socket": shape.zone_socket(zone), "node": zone, "cpuset": format_cpulist(cpus)}
            )
    return pools


def koordlet_annotations(knode: KoordinatorNode) -> dict[str, str]:
    plan = knode.ledger.plan
    shape = plan.shape
    topology = {
        "detail": [
            {"id": c.id, "core": c.core, "socket": c.socket, "node": c.node} for c in shape.cpus()
        ]
    }
    basic = {
        "cpuModel": shape.cpu_model,
        "hyperThreadEnabled": shape.threads_per_core > 1,
        "turboEnabled": True,
        "catL3CbmMask": shape.cat_l3_cbm_mask,
        "vendorID": shape.vendor.value,
    }
    return {
        "node.koordinator.sh/cpu-basic-info": compact_json(basic),
        "node.koordinator.sh/cpu-topology": compact_json(topology),
        "node.koordinator.sh/cpu-shared-pools": compact_json(shared_pools(knode, batch=False)),
        "node.koordinator.sh/be-cpu-shared-pools": compact_json(shared_pools(knode, batch=True)),
        "kubelet.koordinator.sh/cpu-manager-policy": compact_json(_cpu_manager_policy(knode)),
        "node.koordinator.sh/pod-cpu-allocs": compact_json(_pod_cpu_allocs(knode)),
        "node.koordinator.sh/reservation": compact_json(
            node_reservation_annotation(plan, knode.cpus, resolved=True)
        ),
        "node.koordinator.sh/system-qos-resource": compact_json(_system_qos(knode)),
    }


def _cpu_manager_policy(knode: KoordinatorNode) -> dict[str, Any]:
    if not knode.cpus.kubelet_reserved:
        return {"policy": "none"}
    reserved = format_cpulist(knode.cpus.kubelet_reserved)
    options = {"full-pcpus-only": "true"}
    if knode.ledger.plan.uncore_caches:
        options[UNCORE_OPTION] = "true"
    return {"policy": "static", "options": options, "reservedCPUs": reserved}


def _pod_cpu_allocs(knode: KoordinatorNode) -> list[dict[str, Any]] | None:
    allocs = [
        {
            "namespace": pod.namespace,
            "name": pod.name,
            "uid": pod.uid,
            "cpuset": format_cpulist(cpus),
            "managedByKubelet": True,
        }
        for pod, cpus in knode.pinned
    ]
    return allocs or None


def _system_qos(knode: KoordinatorNode) -> dict[str, Any] | None:
    if not knode.cpus.system_qos:
        return None
    return {"cpuset": format_cpulist(knode.cpus.system_qos), "cpusetExclusive": True}
