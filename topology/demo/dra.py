"""A DRA GPU node: a ResourceSlice publishing GPUs per NUMA zone, one held by a claim.

The first two-zone Intel node gets NVIDIA's DRA driver (kubernetes-sigs/dra-driver-nvidia-
gpu: driver gpu.nvidia.com, pool named after the node, devices `gpu-<minor>` with the
attributes of cmd/gpu-kubelet-plugin/deviceinfo.go and the standard
resource.kubernetes.io/numaNode), two GPUs per zone. One running pod on the node holds
gpu-0 through a ResourceClaim. The node's own objects are left as they are: DRA devices
appear in neither the Node's capacity nor the NRT, as on a real cluster.

No draw from the demo's random generators is made here (uids come from uuid5 of the
cluster and the object), so every other object stays what it was without DRA.
"""

from __future__ import annotations

import uuid
from datetime import timedelta
from typing import Any

from .meta import NODES_CREATED, WORKLOADS_START, timestamp
from .plan import NodePlan

API_VERSION = "resource.k8s.io/v1"
DRIVER = "gpu.nvidia.com"
DRA_FAMILY = "intel-2s"
GPUS_PER_ZONE = 2
CLAIMED_DEVICE = "gpu-0"
_RESOURCE_VERSION = "4099000"  # before every other object's: published when the node came up
_GPU = {
    "productName": {"string": "NVIDIA L40S"},
    "brand": {"string": "Nvidia"},
    "architecture": {"string": "Ada Lovelace"},
    "cudaComputeCapability": {"version": "8.9.0"},
    "driverVersion": {"version": "570.133.20"},
    "cudaDriverVersion": {"version": "12.8.0"},
    "type": {"string": "gpu"},
}
_GPU_MEMORY = "46068Mi"


def dra_node(plans: list[NodePlan]) -> NodePlan:
    """The node that gets the DRA driver: the first of the two-zone Intel family (the
    plan always has one)."""
    return next(plan for plan in plans if plan.shape.family == DRA_FAMILY)


def dra_objects(cluster: str, plan: NodePlan, pods: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The node's ResourceSlice and, when a running pod on it can hold one, a ResourceClaim
    allocated gpu-0 (the pod is given the claim in its spec)."""
    objects = [_resource_slice(cluster, plan)]
    holder = _holder(plan, pods)
    if holder is not None:
        claim = _claim(cluster, plan, holder)
        _give_claim(holder, claim["metadata"]["name"])
        objects.append(claim)
    return objects


def demo_uid(cluster: str, kind: str, name: str) -> str:
    """A uid that depends on the cluster and the object only (no random draw)."""
    return str(uuid.uuid5(uuid.NAMESPACE_URL, f"topolens-demo/{cluster}/{kind}/{name}"))


def _resource_slice(cluster: str, plan: NodePlan) -> dict[str, Any]:
    # the generated suffix depends on the node only: another cluster keeps the names
    name = f"{plan.name}-{DRIVER}-{demo_uid('', 'suffix', plan.name)[:5]}"
    devices = [
        _gpu(cluster, plan, zone * GPUS_PER_ZONE + index, zone)
        for zone in range(plan.shape.zone_count)
        for index in range(GPUS_PER_ZONE)
    ]
    return slice_object(cluster, plan, DRIVER, name, devices, resource_version=_RESOURCE_VERSION)


def slice_object(
    cluster: str,
    plan: NodePlan,
    driver: str,
    name: str,
    devices: list[dict[str, Any]],
    *,
    resource_version: str,
    slice_count: int = 1,
) -> dict[str, Any]:
    """A ResourceSlice of `driver`'s pool on the node (pool named after it, generation
    1), published when the node came up, as a kubelet plugin writes it."""
    return {
        "apiVersion": API_VERSION,
        "kind": "ResourceSlice",
        "metadata": {
            "name": name,
            "uid": demo_uid(cluster, "ResourceSlice", name),
            "resourceVersion": resource_version,
            "creationTimestamp": timestamp(NODES_CREATED + timedelta(minutes=plan.index + 5)),
            "generateName": f"{plan.name}-{driver}-",
        },
        "spec": {
            "driver": driver,
            "nodeName": plan.name,
            "pool": {"name": plan.name, "generation": 1, "resourceSliceCount": slice_count},
            "devices": devices,
        },
    }


def _gpu(cluster: str, plan: NodePlan, minor: int, zone: int) -> dict[str, Any]:
    bus = 0x17 + 0x80 * zone + 0x10 * (minor % GPUS_PER_ZONE)
    return {
        "name": f"gpu-{minor}",
        "attributes": {
            **_GPU,
            "uuid": {"string": f"GPU-{demo_uid(cluster, 'gpu', f'{plan.name}/{minor}')}"},
            "resource.kubernetes.io/pciBusID": {"string": f"0000:{bus:02x}:00.0"},
            "resource.kubernetes.io/pcieRoot": {"string": f"pci0000:{bus - 1:02x}"},
            "resource.kubernetes.io/numaNode": {"int": zone},
        },
        "capacity": {"memory": {"value": _GPU_MEMORY}},
    }


def _holder(plan: NodePlan, pods: list[dict[str, Any]]) -> dict[str, Any] | None:
    """The first running pod of a workload on the node (not a DaemonSet's), by name."""
    candidates = [
        pod
        for pod in pods
        if pod["spec"].get("nodeName") == plan.name
        and pod.get("status", {}).get("phase") == "Running"
        and not any(
            ref.get("kind") == "DaemonSet" for ref in pod["metadata"].get("ownerReferences", [])
        )
    ]
    candidates.sort(key=lambda pod: (pod["metadata"]["namespace"], pod["metadata"]["name"]))
    return candidates[0] if candidates else None


def _claim(cluster: str, plan: NodePlan, pod: dict[str, Any]) -> dict[str, Any]:
    namespace, pod_name = pod["metadata"]["namespace"], pod["metadata"]["name"]
    name = f"{pod_name}-gpu"
    return {
        "apiVersion": API_VERSION,
        "kind": "ResourceClaim",
        "metadata": {
            "name": name,
            "namespace": namespace,
            "uid": demo_uid(cluster, "ResourceClaim", f"{namespace}/{name}"),
            "resourceVersion": _RESOURCE_VERSION,
            "creationTimestamp": timestamp(WORKLOADS_START),
        },
        "spec": {
            "devices": {
                "requests": [{"name": "gpu", "exactly": {"deviceClassName": DRIVER, "count": 1}}]
            }
        },
        "status": {
            "allocation": {
                "devices": {
                    "results": [
                        {
                            "request": "gpu",
                            "driver": DRIVER,
                            "pool": plan.name,
                            "device": CLAIMED_DEVICE,
                        }
                    ]
                },
            },
            "reservedFor": [{"resource": "pods", "name": pod_name, "uid": pod["metadata"]["uid"]}],
        },
    }


def _give_claim(pod: dict[str, Any], claim: str) -> None:
    """The pod names the claim (spec.resourceClaims) and its first container uses it."""
    pod["spec"]["resourceClaims"] = [{"name": "gpu", "resourceClaimName": claim}]
    container = pod["spec"]["containers"][0]
    container.setdefault("resources", {})["claims"] = [{"name": "gpu"}]
