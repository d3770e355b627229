"""Koordinator Reservation objects (scheduling.koordinator.sh/v1alpha1)."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timedelta
from enum import StrEnum
from typing import Any

from scheduler_api.engine import ReservationPhase

from .koordinator import QOS_LABEL, RESOURCE_STATUS, CpusetGrant, compact_json
from .meta import SNAPSHOT_TIME, DemoContext, timestamp
from .pods import PodDraft
from .quantity import format_resources


class ReservationRole(StrEnum):
    """What the generator sets up on a Koordinator node around a Reservation."""

    AVAILABLE_PARTLY_USED = "available-partly-used"
    AVAILABLE_UNUSED = "available-unused"
    SUCCEEDED = "succeeded"
    WAITING = "waiting"
    FAILED = "failed"


@dataclass
class ReservationDraft:
    name: str
    uid: str
    phase: ReservationPhase
    namespace: str
    qos_class: str
    requests: dict[str, int]
    owners: list[dict[str, Any]]
    node: str | None = None
    ttl: str | None = None
    expires: datetime | None = None
    allocate_once: bool | None = None
    pre_allocation: bool = False
    allocated: dict[str, int] = field(default_factory=dict)
    current_owners: list[PodDraft] = field(default_factory=list)
    grant: CpusetGrant | None = None
    message: str = ""

    def allocated_annotation(self) -> str:
        return compact_json({"name": self.name, "uid": self.uid})


def new_reservation(
    ctx: DemoContext, name: str, phase: ReservationPhase, **fields: Any
) -> ReservationDraft:
    return ReservationDraft(name=name, uid=ctx.uid(), phase=phase, **fields)


def render_reservation(ctx: DemoContext, draft: ReservationDraft) -> dict[str, Any]:
    annotations = {RESOURCE_STATUS: draft.grant.status_annotation()} if draft.grant else None
    created = SNAPSHOT_TIME - timedelta(hours=ctx.rng.randint(1, 20))
    meta = ctx.metadata(draft.name, created, uid=draft.uid, annotations=annotations)
    return {
        "apiVersion": "scheduling.koordinator.sh/v1alpha1",
        "kind": "Reservation",
        "metadata": meta,
        "spec": _spec(draft),
        "status": _status(draft, created),
    }


def _spec(draft: ReservationDraft) -> dict[str, Any]:
    resources = format_resources(draft.requests)
    template: dict[str, Any] = {
        "metadata": {"namespace": draft.namespace, "labels": {QOS_LABEL: draft.qos_class}},
        "spec": {
            "schedulerName": "koord-scheduler",
            "priorityClassName": "koord-prod",
            "containers": [
                {
                    "name": "reserve",
                    "image": "registry.k8s.io/pause:3.9",
                    "resources": {"requests": resources, "limits": dict(resources)},
                }
            ],
        },
    }
    if draft.node:
        template["spec"]["nodeName"] = draft.node
    spec: dict[str, Any] = {"template": template, "owners": draft.owners}
    if draft.expires is not None:
        spec["expires"] = timestamp(draft.expires)
    elif draft.ttl is not None:
        spec["ttl"] = draft.ttl
    if draft.allocate_once is not None:
        spec["allocateOnce"] = draft.allocate_once
    if draft.pre_allocation:
        spec["preAllocation"] = True
    return spec


def _status(draft: ReservationDraft, created: datetime) -> dict[str, Any]:
    status: dict[str, Any] = {"phase": draft.phase.value}
    if draft.node:
        status["nodeName"] = draft.node
        status["allocatable"] = format_resources(draft.requests)
    if draft.allocated:
        status["allocated"] = format_resources(draft.allocated)
    if draft.current_owners:
        status["currentOwners"] = [
            {"kind": "Pod", "namespace": pod.namespace, "name": pod.name, "uid": pod.uid}
            for pod in draft.current_owners
        ]
    status["conditions"] = _conditions(draft, created)
    return status


_READY = {
    ReservationPhase.AVAILABLE: ("True", "Available"),
    ReservationPhase.SUCCEEDED: ("False", "Succeeded"),
    ReservationPhase.WAITING: ("False", "Waiting"),
    ReservationPhase.FAILED: ("False", "Expired"),
}


def _conditions(draft: ReservationDraft, created: datetime) -> list[dict[str, str]]:
    when = timestamp(created + timedelta(seconds=5))
    if draft.phase == ReservationPhase.PENDING:
        return [_condition("Scheduled", "False", "Unschedulable", draft.message, when)]
    status, reason = _READY[draft.phase]
    return [
        _condition("Scheduled", "True", "Scheduled", "", when),
        _condition("Ready", status, reason, draft.message, when),
    ]


def _condition(kind: str, status: str, reason: str, message: str, when: str) -> dict[str, str]:
    return {
        "type": kind,
        "status": status,
        "reason": reason,
        "message": message,
        "lastProbeTime": when,
        "lastTransitionTime": when,
    }


def pending_reservation(ctx: DemoContext, node_count: int, largest_cpus: int) -> ReservationDraft:
    """Asks for more than any node has, so it stays Pending."""
    requests = {"cpu": (largest_cpus + 128) * 1000, "memory": 2048 << 30}
    owner = ctx.owner("team-data", "ReplicaSet", "etl-burst")
    controller = {
        "apiVersion": "apps/v1",
        "kind": "ReplicaSet",
        "name": owner[0],
        "uid": owner[1],
        "controller": True,
        "namespace": "team-data",
    }
    message = f"0/{node_count} nodes are available: {node_count} Insufficient cpu."
    return new_reservation(
        ctx,
        "resv-etl-burst",
        ReservationPhase.PENDING,
        namespace="team-data",
        qos_class="LSR",
        requests=requests,
        owners=[{"controller": controller}],
        ttl="1h0m0s",
        message=message,
    )
