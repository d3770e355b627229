"""A few pods in trouble, as a real cluster always has some: what the Problems page and
`manage.py diagnose` explain.

- a Pending Guaranteed pod for the topology-aware scheduler that asks two CPUs more than
  the largest NUMA zone of the upstream-NRT nodes holds (the scheduler's FailedScheduling
  event says "cannot align pod", nothing more): the diagnosis shows that the
  single-numa-node nodes refuse it for alignment, and that the nodes whose filter admits
  everything would take it now;
- a pod the kubelet rejected with TopologyAffinityError on one of those nodes (bound by
  a scheduler that did not check the zones), with the kubelet's event.
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from scheduler_api.engine import Flavour

from .meta import SNAPSHOT_TIME, DemoContext, timestamp
from .place_upstream import SCHEDULER as TOPOLOGY_AWARE_SCHEDULER
from .plan import NodePlan

NAMESPACE = "analytics"
# The scheduler's last attempt: most nodes could not align it, the others were full then.
ALIGNMENT_MESSAGE = (
    "0/{nodes} nodes are available: {aligned} cannot align pod: {container}, "
    "{full} Insufficient cpu."
)
REJECTED_MESSAGE = "Pod was rejected: Resources cannot be allocated with Topology locality"


def problem_objects(ctx: DemoContext, plans: list[NodePlan]) -> list[dict[str, Any]]:
    upstream = [
        p for p in plans if p.flavour in (Flavour.UPSTREAM_V1ALPHA2, Flavour.UPSTREAM_V1ALPHA1)
    ]
    if not upstream:
        return []
    widest = max(p.shape.cpus_per_zone for p in upstream)
    pending = _pod(ctx, "wide-join-0", widest + 2, scheduler=TOPOLOGY_AWARE_SCHEDULER)
    pending["status"] = {
        "phase": "Pending",
        "qosClass": "Guaranteed",
        "conditions": [
            {
                "type": "PodScheduled",
                "status": "False",
                "reason": "Unschedulable",
                "message": ALIGNMENT_MESSAGE.format(
                    nodes=len(plans),
                    aligned=len(plans) - len(plans) // 5,
                    full=len(plans) // 5,
                    container="join",
                ),
                "lastTransitionTime": timestamp(SNAPSHOT_TIME - timedelta(minutes=42)),
            }
        ],
    }
    target = upstream[0]
    rejected = _pod(ctx, "wide-join-legacy-0", target.shape.cpus_per_zone + 2, node=target.name)
    rejected["status"] = {
        "phase": "Failed",
        "qosClass": "Guaranteed",
        "reason": "TopologyAffinityError",
        "message": REJECTED_MESSAGE,
    }
    return [
        pending,
        rejected,
        _event(ctx, pending, "FailedScheduling", pending["status"]["conditions"][0]["message"],
               count=17, component=TOPOLOGY_AWARE_SCHEDULER),
        _event(ctx, rejected, "TopologyAffinityError", REJECTED_MESSAGE, count=1,
               component="kubelet"),
    ]  # fmt: skip


def _pod(
    ctx: DemoContext, name: str, cpus: int, *, scheduler: str = "default-scheduler", node: str = ""
) -> dict[str, Any]:
    resources = {"cpu": str(cpus), "memory": f"{cpus * 4}Gi"}
    created = SNAPSHOT_TIME - timedelta(minutes=45)
    spec: dict[str, Any] = {
        "schedulerName": scheduler,
        "containers": [
            {
                "name": "join",
                "image": "registry.example/analytics/join:3.2",
                "resources": {"requests": resources, "limits": resources},
            }
        ],
    }
    if node:
        spec["nodeName"] = node
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": ctx.metadata(
            name,
            created,
            namespace=NAMESPACE,
            labels={"app": "wide-join"},
            owner_references=[
                {
                    "apiVersion": "apps/v1",
                    "kind": "StatefulSet",
                    "name": name.rsplit("-", 1)[0],
                    "uid": ctx.uid(),
                    "controller": True,
                    "blockOwnerDeletion": True,
                }
            ],
        ),
        "spec": spec,
    }


def _event(
    ctx: DemoContext, pod: dict[str, Any], reason: str, message: str, *, count: int, component: str
) -> dict[str, Any]:
    meta = pod["metadata"]
    first = SNAPSHOT_TIME - timedelta(minutes=44)
    return {
        "apiVersion": "v1",
        "kind": "Event",
        # named as the API server names events: the object, then a nanosecond clock in hex
        "metadata": ctx.metadata(
            f"{meta['name']}.{int(first.timestamp() * 1e9):x}", first, namespace=NAMESPACE
        ),
        "involvedObject": {
            "apiVersion": "v1",
            "kind": "Pod",
            "namespace": NAMESPACE,
            "name": meta["name"],
            "uid": meta["uid"],
        },
        "reason": reason,
        "message": message,
        "type": "Warning",
        "count": count,
        "firstTimestamp": timestamp(first),
        "lastTimestamp": timestamp(SNAPSHOT_TIME - timedelta(minutes=1)),
        "source": {"component": component},
    }
