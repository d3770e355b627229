"""Everything that runs on one Koordinator node, in the order it was scheduled."""

from __future__ import annotations

from scheduler_api.engine import CPUBindPolicy

from .cpu_picker import pick_in_zone
from .general_pods import add_daemonsets, add_finished_job, add_shared_pool_pods
from .koordinator import RESOURCE_STATUS, SCHEDULER, CpusetGrant, KoordinatorNode
from .koordinator_pods import (
    batch_pods,
    decorate_shared,
    koordinate,
    numa_bound_ls_pod,
    pinned_pod,
    prod_pod,
    set_batch_capacity,
)
from .koordinator_reservations import (
    available_partly_used,
    available_unused,
    failed,
    succeeded,
    waiting,
)
from .meta import DemoContext
from .pods import PodDraft
from .quantity import CPU, MEMORY
from .reservations import ReservationDraft, ReservationRole


def populate_koordinator(
    ctx: DemoContext, knode: KoordinatorNode, roles: list[ReservationRole]
) -> tuple[list[PodDraft], list[ReservationDraft]]:
    pods = add_daemonsets(ctx, knode.ledger)
    reservations: list[ReservationDraft] = []
    _reserve_before_workloads(ctx, knode, roles, pods, reservations)
    if knode.ledger.plan.koordinator and knode.ledger.plan.koordinator.kubelet_static:
        pods += [pod for _ in range(ctx.rng.randint(1, 3)) if (pod := pinned_pod(ctx, knode))]
    pods += _prod_pods(ctx, knode)
    pods += [pod for _ in range(ctx.rng.randint(0, 3)) if (pod := numa_bound_ls_pod(ctx, knode))]
    pods += add_shared_pool_pods(ctx, knode.ledger, SCHEDULER, decorate_shared)
    set_batch_capacity(knode)
    pods += batch_pods(ctx, knode)
    if ReservationRole.WAITING in roles and (pending := waiting(ctx, knode, pods)):
        reservations.append(pending)
    if ReservationRole.FAILED in roles:
        reservations.append(failed(ctx, knode))
    pods += add_finished_job(ctx, SCHEDULER, lambda draft: _finished_with_cpuset(knode, draft))
    return pods, reservations


def _reserve_before_workloads(
    ctx: DemoContext,
    knode: KoordinatorNode,
    roles: list[ReservationRole],
    pods: list[PodDraft],
    reservations: list[ReservationDraft],
) -> None:
    if ReservationRole.AVAILABLE_PARTLY_USED in roles and (
        partly := available_partly_used(ctx, knode)
    ):
        reservations.append(partly[0])
        pods.append(partly[1])
    if ReservationRole.AVAILABLE_UNUSED in roles and (unused := available_unused(ctx, knode)):
        reservations.append(unused)
    if ReservationRole.SUCCEEDED in roles:
        done = next((found for _ in range(8) if (found := succeeded(ctx, knode))), None)
        if done is not None:
            reservations.append(done[0])
            pods.append(done[1])


def _prod_pods(ctx: DemoContext, knode: KoordinatorNode) -> list[PodDraft]:
    ledger = knode.ledger
    target = ctx.rng.uniform(0.3, 0.75) * sum(zone.allocatable[CPU] for zone in ledger.zones)
    largest = ledger.plan.shape.cpus_per_zone
    if not knode.strict_numa:
        largest *= 2  # big pods may span two zones
    pods: list[PodDraft] = []
    failures = 0
    while sum(zone.used.get(CPU, 0) for zone in ledger.zones) < target and failures < 8:
        pod = prod_pod(ctx, knode, max_cpus=largest)
        if pod is None:
            failures += 1
        else:
            pods.append(pod)
    return pods


def _finished_with_cpuset(knode: KoordinatorNode, draft: PodDraft) -> None:
    """A completed LSR Job pod keeps the cpuset it ran on; those CPUs are free again."""
    koordinate(draft, "LSR")
    count = draft.requests()[CPU] // 1000
    for zone in knode.ledger.zones:
        cpus = pick_in_zone(knode.ledger.plan.shape, zone, count, CPUBindPolicy.FULL_PCPUS)
        if cpus is not None:
            grant = CpusetGrant({zone.index: cpus}, {zone.index: draft.requests()[MEMORY]})
            draft.annotations[RESOURCE_STATUS] = grant.status_annotation()
            return
