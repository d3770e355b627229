"""Small kubectl-style dumps for the diagnosis tests: two upstream-NRT nodes whose CPUs
are free in total but split across NUMA zones, a Pending pod, a rejected pod, events."""

from __future__ import annotations

from typing import Any

TOPO_AWARE = "topo-aware-scheduler"  # scheduler-plugins' install name: a built-in profile


def node(name: str, cpu: int = 16, labels: dict[str, str] | None = None) -> dict[str, Any]:
    amounts = {"cpu": str(cpu), "memory": "64Gi", "pods": "110"}
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": name, "labels": labels or {}},
        "status": {"capacity": amounts, "allocatable": amounts},
    }


def nrt(
    name: str,
    free: tuple[int, ...] = (6, 8),
    *,
    policy: str = "single-numa-node",
    fingerprint: str = "",
    updated: str = "",
) -> dict[str, Any]:
    attributes = [
        {"name": "topologyManagerPolicy", "value": policy},
        {"name": "topologyManagerScope", "value": "pod"},
    ]
    if fingerprint:
        attributes.append({"name": "nodeTopologyPodsFingerprint", "value": fingerprint})
    metadata: dict[str, Any] = {"name": name}
    if updated:
        metadata["managedFields"] = [{"manager": "nfd-topology-updater", "time": updated}]
    return {
        "apiVersion": "topology.node.k8s.io/v1alpha2",
        "kind": "NodeResourceTopology",
        "metadata": metadata,
        "topologyPolicies": [],
        "attributes": attributes,
        "zones": [
            {
                "name": f"node-{index}",
                "type": "Node",
                "resources": [
                    {"name": "cpu", "capacity": "8", "allocatable": "8", "available": str(cpus)},
                    {
                        "name": "memory",
                        "capacity": "32Gi",
                        "allocatable": "32Gi",
                        "available": "30Gi",
                    },
                ],
            }
            for index, cpus in enumerate(free)
        ],
    }


def pod(
    name: str,
    cpu: str = "10",
    *,
    node_name: str = "",
    status: dict[str, Any] | None = None,
    scheduler: str = TOPO_AWARE,
) -> dict[str, Any]:
    resources = {"cpu": cpu, "memory": "1Gi"}
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": name,
            "namespace": "prod",
            "uid": f"uid-{name}",
            "creationTimestamp": "2026-11-29T01:00:00Z",
        },
        "spec": {
            "nodeName": node_name,
            "schedulerName": scheduler,
            "containers": [
                {"name": "app", "resources": {"requests": resources, "limits": resources}}
            ],
        },
        "status": status or {"phase": "Running" if node_name else "Pending"},
    }


UNSCHEDULABLE = {
    "phase": "Pending",
    "conditions": [
        {
            "type": "PodScheduled",
            "status": "False",
            "reason": "Unschedulable",
            "message": "0/2 nodes are available: 2 cannot align pod: app.",
            "lastTransitionTime": "2026-11-29T01:00:05Z",
        }
    ],
}
REJECTED = {
    "phase": "Failed",
    "reason": "TopologyAffinityError",
    "message": "Pod was rejected: Resources cannot be allocated with Topology locality",
}


def event(pod_name: str, reason: str, *, count: int = 1, name: str = "") -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Event",
        "metadata": {"name": name or f"{pod_name}.{reason.lower()}", "namespace": "prod"},
        "involvedObject": {"kind": "Pod", "name": pod_name, "namespace": "prod"},
        "reason": reason,
        "message": f"{reason} for {pod_name}",
        "type": "Warning",
        "count": count,
        "firstTimestamp": "2026-11-29T01:00:05Z",
        "lastTimestamp": "2026-11-29T01:05:00Z",
        "source": {"component": "topo-aware-scheduler"},
    }


def split_cluster() -> list[dict[str, Any]]:
    """Two nodes of 16 CPUs with 14 free each, at most 8 of them on one NUMA zone: a
    10-CPU Guaranteed pod fits each node in total but no zone."""
    return [
        node("n1"),
        node("n2"),
        nrt("n1", (6, 8)),
        nrt("n2", (7, 7)),
        pod("waiting", status=UNSCHEDULABLE),
        pod("refused", node_name="n1", status=REJECTED),
        event("waiting", "FailedScheduling", count=3),
        event("waiting", "FailedScheduling", count=2, name="waiting.second"),
        event("refused", "TopologyAffinityError"),
    ]
