"""Reservations placed on Koordinator nodes, each with the pods that go with it."""

from __future__ import annotations

from datetime import timedelta

from scheduler_api.engine import CPUBindPolicy, ReservationPhase

from .koordinator import (
    RESERVATION_ALLOCATED,
    RESOURCE_SPEC,
    RESOURCE_STATUS,
    SCHEDULER,
    CpusetGrant,
    KoordinatorNode,
    compact_json,
)
from .koordinator_pods import koordinate, prod_pod
from .meta import SNAPSHOT_TIME, DemoContext
from .pods import OwnerKind, PodDraft, guaranteed, new_pod
from .quantity import CPU, GIB, MEMORY
from .reservations import ReservationDraft, new_reservation

WEB_IMAGE = "ghcr.io/acme/web:5.2.0"


def available_partly_used(
    ctx: DemoContext, knode: KoordinatorNode
) -> tuple[ReservationDraft, PodDraft] | None:
    """8 CPUs reserved for `app=web` pods, half of them already taken by one."""
    ledger = knode.ledger
    requests = {CPU: 8000, MEMORY: 16 * GIB}
    bind = knode.bind_policy(CPUBindPolicy.FULL_PCPUS)
    if not ledger.fits(requests):
        return None
    grant = knode.grant(8, requests[MEMORY], bind)
    if grant is None:
        return None
    ledger.add(requests)
    pod, used = _pod_inside(ctx, knode, grant)
    reservation = new_reservation(
        ctx,
        f"resv-{ledger.plan.name}-web",
        ReservationPhase.AVAILABLE,
        namespace="team-web",
        qos_class="LSR",
        requests=requests,
        owners=[{"labelSelector": {"matchLabels": {"app": "web"}}}],
        node=ledger.plan.name,
        ttl="12h0m0s",
        allocate_once=False,
        allocated=used,
        current_owners=[pod],
        grant=grant,
    )
    pod.annotations[RESERVATION_ALLOCATED] = reservation.allocated_annotation()
    return reservation, pod


def _pod_inside(
    ctx: DemoContext, knode: KoordinatorNode, grant: CpusetGrant
) -> tuple[PodDraft, dict[str, int]]:
    """A web pod whose cpuset is carved out of the reservation's (its first cores)."""
    shape = knode.ledger.plan.shape
    ((zone, cpus),) = grant.cpus.items()
    mine = sorted(sorted(cpus, key=lambda cpu: (shape.cpu(cpu).core, cpu))[:4])
    used = {CPU: 4000, MEMORY: 8 * GIB}
    containers = [guaranteed("web", WEB_IMAGE, used)]
    options = {"scheduler": SCHEDULER, "owner_variant": "LSR"}
    pod = new_pod(ctx, "team-web", "web", OwnerKind.REPLICASET, containers, **options)
    koordinate(pod, "LSR")
    pod.annotations[RESOURCE_SPEC] = compact_json({"preferredCPUBindPolicy": "FullPCPUs"})
    pod.annotations[RESOURCE_STATUS] = CpusetGrant(
        {zone: mine}, {zone: used[MEMORY]}
    ).status_annotation()
    knode.lsr.update(mine)
    return pod, used


def available_unused(ctx: DemoContext, knode: KoordinatorNode) -> ReservationDraft | None:
    """Capacity held for a ReplicaSet's next pod, not yet claimed; expires at a fixed time."""
    requests = {CPU: 2000, MEMORY: 4 * GIB}
    if not knode.ledger.fits(requests):
        return None
    knode.ledger.add(requests)
    # The same ReplicaSet as the LSR api pods koord-scheduler places.
    name, uid = ctx.owner("team-web", OwnerKind.REPLICASET, "api", f"{SCHEDULER}/LSR")
    controller = {
        "apiVersion": "apps/v1",
        "kind": "ReplicaSet",
        "name": name,
        "uid": uid,
        "controller": True,
    }
    return new_reservation(
        ctx,
        f"resv-{knode.ledger.plan.name}-api-spare",
        ReservationPhase.AVAILABLE,
        namespace="team-web",
        qos_class="LS",
        requests=requests,
        owners=[{"controller": controller | {"namespace": "team-web"}}],
        node=knode.ledger.plan.name,
        expires=SNAPSHOT_TIME + timedelta(hours=6),
    )


def succeeded(ctx: DemoContext, knode: KoordinatorNode) -> tuple[ReservationDraft, PodDraft] | None:
    """A migration reservation consumed whole by the pod it was made for."""
    pod = prod_pod(ctx, knode, max_cpus=8)
    if pod is None:
        return None
    requests = {name: pod.requests()[name] for name in (CPU, MEMORY)}
    reservation = new_reservation(
        ctx,
        f"resv-{knode.ledger.plan.name}-migrate-{pod.app}",
        ReservationPhase.SUCCEEDED,
        namespace=pod.namespace,
        qos_class=pod.labels["koordinator.sh/qosClass"],
        requests=requests,
        owners=[{"object": {"kind": "Pod", "namespace": pod.namespace, "name": pod.name}}],
        node=knode.ledger.plan.name,
        ttl="30m0s",
        allocate_once=True,
        allocated=dict(requests),
        current_owners=[pod],
        grant=knode.grants[pod.uid],
    )
    pod.annotations[RESERVATION_ALLOCATED] = reservation.allocated_annotation()
    return reservation, pod


def waiting(
    ctx: DemoContext, knode: KoordinatorNode, pods: list[PodDraft]
) -> ReservationDraft | None:
    """Pre-allocates what a running LS pod holds; nothing extra is reserved yet."""
    candidates = [pod for pod in pods if pod.labels.get("koordinator.sh/qosClass") == "LS"]
    if not candidates:
        return None
    pod = ctx.rng.choice(candidates)
    return new_reservation(
        ctx,
        f"resv-{knode.ledger.plan.name}-prealloc-{pod.app}",
        ReservationPhase.WAITING,
        namespace=pod.namespace,
        qos_class="LS",
        requests={name: pod.requests()[name] for name in (CPU, MEMORY)},
        owners=[{"labelSelector": {"matchLabels": {"app": pod.app}}}],
        node=knode.ledger.plan.name,
        ttl="2h0m0s",
        pre_allocation=True,
        message="waiting for pre-allocated pods to release their resources",
    )


def failed(ctx: DemoContext, knode: KoordinatorNode) -> ReservationDraft:
    """Scheduled, never claimed, expired: it holds nothing any more."""
    return new_reservation(
        ctx,
        f"resv-{knode.ledger.plan.name}-canary",
        ReservationPhase.FAILED,
        namespace="team-web",
        qos_class="LS",
        requests={CPU: 2000, MEMORY: 4 * GIB},
        owners=[{"labelSelector": {"matchLabels": {"app": "canary"}}}],
        node=knode.ledger.plan.name,
        ttl="10m0s",
        message="expired",
    )
