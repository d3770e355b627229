"""v1 Node objects."""

from __future__ import annotations

import json
from collections.abc import Callable
from datetime import timedelta
from typing import Any

from scheduler_api.engine import Flavour
from topology.parsers.cpulist import format_cpulist

from .capacity import KoordinatorCpus
from .hardware import Vendor
from .ledger import NodeLedger
from .meta import NODES_CREATED, SNAPSHOT_TIME, DemoContext, timestamp
from .plan import NodePlan, NodeReservation
from .quantity import CPU, HUGEPAGES, MEMORY, format_kib, format_memory

EPHEMERAL_CAPACITY = "936253956Ki"
EPHEMERAL_ALLOCATABLE = "862853950329"
KUBELET_VERSION = "v1.30.4"
# The uncore-cache node's kubelet: prefer-align-cpus-by-uncorecache is beta (on by
# default) from v1.34, and the DRA CPU driver needs resource.k8s.io/v1 (v1.34).
UNCORE_KUBELET_VERSION = "v1.34.2"

NODE_RESERVATION_ANNOTATION = "node.koordinator.sh/reservation"


def node_ip(plan: NodePlan) -> str:
    return f"10.0.{plan.index // 200}.{plan.index % 200 + 10}"


def pod_cidr(plan: NodePlan) -> str:
    return f"10.{244 + plan.index // 250}.{plan.index % 250}.0/24"


def pod_ip(plan: NodePlan, ordinal: int) -> str:
    return f"10.{244 + plan.index // 250}.{plan.index % 250}.{ordinal + 2}"


def node_labels(plan: NodePlan) -> dict[str, str]:
    shape = plan.shape
    labels = {
        "kubernetes.io/hostname": plan.name,
        "kubernetes.io/os": "linux",
        "kubernetes.io/arch": "amd64",
        "beta.kubernetes.io/os": "linux",
        "beta.kubernetes.io/arch": "amd64",
        "node.kubernetes.io/instance-type": shape.instance_type,
        "topology.kubernetes.io/zone": plan.zone_label,
        "node-role.kubernetes.io/worker": "",
    }
    if plan.flavour in (Flavour.UPSTREAM_V1ALPHA1, Flavour.UPSTREAM_V1ALPHA2):
        labels |= {
            "feature.node.kubernetes.io/cpu-model.vendor_id": "AMD"
            if shape.vendor == Vendor.AMD
            else "Intel",
            "feature.node.kubernetes.io/cpu-hardware_multithreading": "true",
            "feature.node.kubernetes.io/memory-numa": str(shape.zone_count > 1).lower(),
        }
    if shape.gpus:
        labels |= {
            "nvidia.com/gpu.present": "true",
            "nvidia.com/gpu.product": shape.gpu_product,
            "nvidia.com/gpu.count": str(shape.gpus),
        }
    return labels | _system_labels(plan)


def _system_labels(plan: NodePlan) -> dict[str, str]:
    if plan.crane_awareness is not None:
        return {"topology.crane.io/topology-awareness": plan.crane_awareness}
    setup = plan.koordinator
    if setup is None:
        return {}
    labels = {
        "node.koordinator.sh/numa-allocate-strategy": setup.allocate_strategy,
        "node.koordinator.sh/numa-topology-policy": setup.numa_policy,
        "node.koordinator.sh/cpu-bind-policy": setup.bind_policy,
    }
    return {key: value for key, value in labels.items() if value}


def node_reservation_annotation(
    plan: NodePlan, cpus: KoordinatorCpus, *, resolved: bool
) -> dict[str, Any]:
    """The node annotation as a user writes it, or as koordlet re-emits it (`resolved`)."""
    mode = plan.koordinator.reservation if plan.koordinator else NodeReservation.NONE
    reserved = format_cpulist(cpus.annotation_reserved)
    if mode == NodeReservation.CPUS:
        return {"reservedCPUs": reserved}
    if mode == NodeReservation.CPUS_ONLY:
        return {"reservedCPUs": reserved, "applyPolicy": "ReservedCPUsOnly"}
    if mode == NodeReservation.COUNT:
        count = {"resources": {"cpu": str(len(cpus.annotation_reserved))}}
        return count | {"reservedCPUs": reserved} if resolved else count
    return {}


def format_node_resources(amounts: dict[str, int]) -> dict[str, str]:
    """The kubelet's spelling: memory in Ki, batch memory in bytes, cpu in cores."""
    special: dict[str, Callable[[int], str]] = {
        CPU: lambda millis: str(millis // 1000),
        MEMORY: format_kib,
    } | dict.fromkeys(HUGEPAGES, format_memory)
    return {name: special.get(name, str)(value) for name, value in amounts.items()}


def render_node(
    ctx: DemoContext, ledger: NodeLedger, cpus: KoordinatorCpus | None
) -> dict[str, Any]:
    plan = ledger.plan
    annotations = {
        "node.alpha.kubernetes.io/ttl": "0",
        "volumes.kubernetes.io/controller-managed-attach-detach": "true",
    }
    if (
        cpus is not None
        and plan.koordinator
        and plan.koordinator.reservation != NodeReservation.NONE
    ):
        value = node_reservation_annotation(plan, cpus, resolved=False)
        annotations[NODE_RESERVATION_ANNOTATION] = json.dumps(value, separators=(",", ":"))
    created = NODES_CREATED + timedelta(minutes=plan.index)
    meta = ctx.metadata(plan.name, created, labels=node_labels(plan), annotations=annotations)
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": meta,
        "spec": {
            "podCIDR": pod_cidr(plan),
            "podCIDRs": [pod_cidr(plan)],
            "providerID": f"baremetal://{ctx.cluster}/{plan.name}",
        },
        "status": _node_status(ctx, ledger, meta["uid"]),
    }


def _node_status(ctx: DemoContext, ledger: NodeLedger, uid: str) -> dict[str, Any]:
    plan = ledger.plan
    # hugepages pools, where the node has any, replace the static "0"
    capacity = _static_resources(EPHEMERAL_CAPACITY) | format_node_resources(ledger.capacity)
    allocatable = _static_resources(EPHEMERAL_ALLOCATABLE) | format_node_resources(
        ledger.allocatable
    )
    version = UNCORE_KUBELET_VERSION if plan.uncore_caches else KUBELET_VERSION
    return {
        "capacity": _ordered(capacity),
        "allocatable": _ordered(allocatable),
        "conditions": _conditions(),
        "addresses": [
            {"type": "InternalIP", "address": node_ip(plan)},
            {"type": "Hostname", "address": plan.name},
        ],
        "daemonEndpoints": {"kubeletEndpoint": {"Port": 10250}},
        "nodeInfo": {
            "machineID": ctx.hex_digest(32),
            "systemUUID": uid.upper(),
            "bootID": ctx.uid(),
            "kernelVersion": "6.1.0-23-amd64",
            "osImage": "Debian GNU/Linux 12 (bookworm)",
            "containerRuntimeVersion": "containerd://1.7.20",
            "kubeletVersion": version,
            "kubeProxyVersion": version,
            "operatingSystem": "linux",
            "architecture": "amd64",
        },
    }


def _static_resources(ephemeral: str) -> dict[str, str]:
    return {"ephemeral-storage": ephemeral, "hugepages-1Gi": "0", "hugepages-2Mi": "0"}


_ORDER = ("cpu", "memory", "pods", "ephemeral-storage", "hugepages-1Gi", "hugepages-2Mi")


def _ordered(resources: dict[str, str]) -> dict[str, str]:
    known = {name: resources[name] for name in _ORDER if name in resources}
    return known | {name: value for name, value in sorted(resources.items()) if name not in known}


_CONDITIONS = (
    ("MemoryPressure", "False", "KubeletHasSufficientMemory"),
    ("DiskPressure", "False", "KubeletHasNoDiskPressure"),
    ("PIDPressure", "False", "KubeletHasSufficientPID"),
    ("Ready", "True", "KubeletReady"),
)


def _conditions() -> list[dict[str, str]]:
    return [
        {
            "type": kind,
            "status": status,
            "reason": reason,
            "message": f"kubelet: {reason}",
            "lastHeartbeatTime": timestamp(SNAPSHOT_TIME),
            "lastTransitionTime": timestamp(NODES_CREATED),
        }
        for kind, status, reason in _CONDITIONS
    ]
