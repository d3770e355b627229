"""Workloads on Koordinator nodes: LSE/LSR pods with cpusets, kubelet-pinned pods,
NUMA-bound LS pods, shared-pool LS pods and batch (BE) pods."""

from __future__ import annotations

from scheduler_api.engine import CPUBindPolicy

from .cpu_picker import pick_in_zone
from .koordinator import (
    NUMA_TOPOLOGY_SPEC,
    QOS_LABEL,
    RESOURCE_SPEC,
    RESOURCE_STATUS,
    SCHEDULER,
    CpusetGrant,
    KoordinatorNode,
    compact_json,
)
from .meta import DemoContext
from .pods import ContainerDraft, OwnerKind, PodDraft, new_pod
from .quantity import BATCH_CPU, BATCH_MEMORY, CPU, GIB, MEMORY, format_resources
from .workloads import burstable_pod, guaranteed_pod

# Reclaim thresholds of the colocation profile (slo-controller-config) and observed usage.
CPU_RECLAIM_PERCENT = 60
MEMORY_RECLAIM_PERCENT = 65
PROD_CPU_USAGE = 0.55
PROD_MEMORY_USAGE = 0.7

_RESOURCE_SPECS = (
    ({"preferredCPUBindPolicy": "FullPCPUs"}, CPUBindPolicy.FULL_PCPUS),
    ({"requiredCPUBindPolicy": "FullPCPUs"}, CPUBindPolicy.FULL_PCPUS),
    (
        {"preferredCPUBindPolicy": "SpreadByPCPUs", "preferredCPUExclusivePolicy": "PCPULevel"},
        CPUBindPolicy.SPREAD_BY_PCPUS,
    ),
)


def koordinate(draft: PodDraft, qos_class: str, priority_class: str = "koord-prod") -> None:
    draft.scheduler = SCHEDULER
    draft.priority_class = priority_class
    draft.labels[QOS_LABEL] = qos_class


def prod_pod(ctx: DemoContext, knode: KoordinatorNode, *, max_cpus: int) -> PodDraft | None:
    """An LSE or LSR pod with its cpuset; holds zones and node, or returns None."""
    spec, preferred = ctx.rng.choice(_RESOURCE_SPECS)
    bind = knode.bind_policy(preferred)
    qos_class = "LSE" if ctx.rng.random() < 0.3 else "LSR"
    options = {"even_cpus": bind == CPUBindPolicy.FULL_PCPUS, "sidecars": False}
    draft = guaranteed_pod(
        ctx, max_cpus=max_cpus, scheduler=SCHEDULER, owner_variant=qos_class, **options
    )
    if draft is None:
        return None
    grant = grant_for(knode, draft, bind)
    if grant is None:
        return None
    koordinate(draft, qos_class)
    draft.annotations[RESOURCE_SPEC] = compact_json(spec)
    draft.annotations[RESOURCE_STATUS] = grant.status_annotation()
    (knode.lse if qos_class == "LSE" else knode.lsr).update(grant.cpuset)
    knode.grants[draft.uid] = grant
    knode.ledger.add(draft.requests())
    return draft


def grant_for(knode: KoordinatorNode, draft: PodDraft, bind: CPUBindPolicy) -> CpusetGrant | None:
    requests = draft.requests()
    if not knode.ledger.fits(requests):
        return None
    return knode.grant(requests[CPU] // 1000, requests[MEMORY], bind)


def pinned_pod(ctx: DemoContext, knode: KoordinatorNode) -> PodDraft | None:
    """A Guaranteed pod the kubelet's static policy pinned (full-pcpus-only: whole cores)."""
    draft = guaranteed_pod(ctx, max_cpus=4, even_cpus=True, sidecars=False)
    if draft is None or not knode.ledger.fits(draft.requests()):
        return None
    ledger, shape = knode.ledger, knode.ledger.plan.shape
    count = draft.requests()[CPU] // 1000
    for zone in ledger.zones:
        cpus = pick_in_zone(shape, zone, count, CPUBindPolicy.FULL_PCPUS)
        if cpus is None:
            continue
        zone.free_cpus -= set(cpus)
        zone.hold({CPU: len(cpus) * 1000})
        ledger.add(draft.requests())
        knode.pinned.append((draft, frozenset(cpus)))
        return draft
    return None


def numa_bound_ls_pod(ctx: DemoContext, knode: KoordinatorNode) -> PodDraft | None:
    """A Burstable LS pod the scheduler bound to one zone (numa-topology-spec)."""
    setup = knode.ledger.plan.koordinator
    if setup is None or setup.numa_policy is None:
        return None
    draft = burstable_pod(ctx, SCHEDULER)
    requests = draft.requests()
    amounts = {CPU: requests[CPU], MEMORY: requests[MEMORY]}
    zone = next((z for z in knode.ledger.zones if z.fits(amounts)), None)
    if zone is None or not knode.ledger.fits(requests):
        return None
    zone.hold(amounts)
    knode.ledger.add(requests)
    koordinate(draft, "LS")
    draft.annotations[NUMA_TOPOLOGY_SPEC] = compact_json({"numaTopologyPolicy": setup.numa_policy})
    status = {"numaNodeResources": [{"node": zone.index, "resources": format_resources(amounts)}]}
    draft.annotations[RESOURCE_STATUS] = compact_json(status)
    return draft


def decorate_shared(draft: PodDraft) -> None:
    """Shared-pool Burstable pods on Koordinator nodes are LS."""
    koordinate(draft, "LS")


def set_batch_capacity(knode: KoordinatorNode) -> None:
    """koord-manager's batch resources (usage policy): what prod leaves unused, minus margins."""
    ledger = knode.ledger
    requested = ledger.requested
    reserved_cpu = ledger.capacity[CPU] - ledger.allocatable[CPU]
    reserved_memory = ledger.capacity[MEMORY] - ledger.allocatable[MEMORY]
    batch_cpu = ledger.capacity[CPU] * CPU_RECLAIM_PERCENT // 100 - reserved_cpu
    batch_cpu -= int(requested.get(CPU, 0) * PROD_CPU_USAGE)
    batch_memory = ledger.capacity[MEMORY] * MEMORY_RECLAIM_PERCENT // 100 - reserved_memory
    batch_memory -= int(requested.get(MEMORY, 0) * PROD_MEMORY_USAGE)
    for amounts in (ledger.capacity, ledger.allocatable):
        amounts[BATCH_CPU] = max(0, batch_cpu)
        amounts[BATCH_MEMORY] = max(0, batch_memory)


def batch_pods(ctx: DemoContext, knode: KoordinatorNode) -> list[PodDraft]:
    pods = []
    for _ in range(ctx.rng.randint(1, 5)):
        cores = ctx.rng.choice((1, 2, 4))
        amounts = {BATCH_CPU: cores * 1000, BATCH_MEMORY: cores * 2 * GIB}
        if not knode.ledger.fits(amounts):
            break
        container = ContainerDraft(
            "executor", "docker.io/apache/spark:3.5.1", dict(amounts), dict(amounts)
        )
        draft = new_pod(
            ctx, "batch", "spark-exec", OwnerKind.REPLICASET, [container], scheduler=SCHEDULER
        )
        koordinate(draft, "BE", "koord-batch")
        knode.ledger.add(amounts)
        pods.append(draft)
    return pods
