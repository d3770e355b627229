"""DRA objects for tests, as `kubectl get -o json` lists them (resource.k8s.io/v1)."""

from __future__ import annotations

from typing import Any

DRIVER = "gpu.example.com"


def gpu(name: str, numa: dict[str, Any] | None = None, **attributes: Any) -> dict[str, Any]:
    """One device; `numa`: its NUMA attributes as published ({"resource.kubernetes.io/
    numaNode": {"int": 0}}); extra attributes as strings."""
    return {
        "name": name,
        "attributes": {
            "productName": {"string": "Example GPU 80GB"},
            "type": {"string": "gpu"},
            **{key: {"string": value} for key, value in attributes.items()},
            **(numa or {}),
        },
        "capacity": {"memory": {"value": "80Gi"}, "cores": {"value": "132"}},
    }


def standard_numa(node: int) -> dict[str, Any]:
    return {"resource.kubernetes.io/numaNode": {"int": node}}


def resource_slice(
    name: str,
    devices: list[dict[str, Any]],
    *,
    node: str = "gpu-1",
    driver: str = DRIVER,
    pool: str | None = None,
    generation: int = 1,
    api_version: str = "resource.k8s.io/v1",
) -> dict[str, Any]:
    return {
        "apiVersion": api_version,
        "kind": "ResourceSlice",
        "metadata": {"name": name, "uid": f"uid-{name}", "resourceVersion": "10"},
        "spec": {
            "driver": driver,
            "pool": {"name": pool or node, "generation": generation, "resourceSliceCount": 1},
            "nodeName": node,
            "devices": devices,
        },
    }


def resource_claim(
    name: str,
    devices: list[str],
    *,
    namespace: str = "ml",
    pool: str = "gpu-1",
    driver: str = DRIVER,
    pod: str | None = "trainer-0",
) -> dict[str, Any]:
    status: dict[str, Any] = {
        "allocation": {
            "devices": {
                "results": [
                    {"request": "gpu", "driver": driver, "pool": pool, "device": device}
                    for device in devices
                ]
            }
        }
    }
    if pod:
        status["reservedFor"] = [{"resource": "pods", "name": pod, "uid": f"uid-{pod}"}]
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceClaim",
        "metadata": {
            "name": name,
            "namespace": namespace,
            "uid": f"uid-{name}",
            "resourceVersion": "11",
        },
        "spec": {"devices": {"requests": [{"name": "gpu", "exactly": {"deviceClassName": "gpu"}}]}},
        "status": status,
    }
