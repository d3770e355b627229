"""Pods every node has besides its pinned workloads: shared-pool Burstable and BestEffort
pods, plus a finished Job pod now and then (Succeeded pods hold nothing)."""

from __future__ import annotations

from collections.abc import Callable

from .ledger import NodeLedger
from .meta import DemoContext
from .pods import PodDraft, PodPhase
from .quantity import CPU
from .workloads import best_effort_pod, burstable_pod, daemonset_pods, finished_job_pod

Decorate = Callable[[PodDraft], None]
DEFAULT_SCHEDULER = "default-scheduler"


def _keep(draft: PodDraft) -> None:
    return None


def add_daemonsets(ctx: DemoContext, ledger: NodeLedger) -> list[PodDraft]:
    pods = daemonset_pods(ctx, ledger.plan)
    for draft in pods:
        ledger.add(draft.requests())
    return pods


def add_shared_pool_pods(
    ctx: DemoContext,
    ledger: NodeLedger,
    scheduler: str = DEFAULT_SCHEDULER,
    decorate: Decorate = _keep,
) -> list[PodDraft]:
    """Burstable pods (as many as fit) and a couple of BestEffort ones."""
    rng = ctx.rng
    pods: list[PodDraft] = []
    for _ in range(1 + ledger.capacity[CPU] // 24_000 + rng.randint(0, 3)):
        draft = burstable_pod(ctx, scheduler)
        if ledger.fits(draft.requests()):
            ledger.add(draft.requests())
            decorate(draft)
            pods.append(draft)
    pods += [best_effort_pod(ctx) for _ in range(rng.randint(0, 2))]
    return pods


def add_finished_job(
    ctx: DemoContext, scheduler: str, decorate: Decorate = _keep
) -> list[PodDraft]:
    """A completed report Job pod, in its system's format, holding nothing any more."""
    if ctx.rng.random() >= 0.35:
        return []
    draft = finished_job_pod(ctx, scheduler)
    draft.phase = PodPhase.SUCCEEDED
    decorate(draft)
    return [draft]
