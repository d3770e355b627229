"""The Memory Manager node: its kubelet runs the Static Memory Manager over hugepages pools.

What each component shows of it, and where that comes from:

- The kubelet's machine state (kubernetes v1.34 pkg/kubelet/cm/memorymanager/
  policy_static.go `getDefaultMachineState`): per NUMA node, a hugepages size's
  allocatable is its pool less what `reservedMemory` keeps of it (nothing here), and
  regular memory's is the NUMA node's MemTotal less `reservedMemory` less its pools.
  `reservedMemory` puts the whole kube-reserved + eviction threshold on NUMA 0, as the
  demo's other NFD nodes already publish it (`capacity._take_kubelet_reservation`).
- The Node (pkg/kubelet/nodestatus/setters.go `MachineInfo`): memory capacity stays
  MemTotal, each pool is a `hugepages-<size>` capacity and allocatable, and the pools come
  off memory allocatable.
- NFD's topology-updater (node-feature-discovery pkg/utils/memory_resources.go,
  pkg/resourcemonitor/noderesourcesaggregator.go): a zone's capacity is its NUMA node's
  MemTotal and pool sizes, allocatable the Memory Manager's (podresources
  GetAllocatableResources), available that less what Guaranteed containers hold.
- `memoryManagerPolicy: Static` among the NRT attributes is Topolens's convention (the
  engine reads it beside `topologyManagerPolicy`); NFD v0.16 publishes only the Topology
  Manager's policy and scope.

The pools are booted after the fleet was filled, from the memory the node's pods leave
free, and the hugepages pods come on top; the node is kept for Guaranteed workloads, so
its shared-pool pods are left out (`dedicate`). No other node changes.
"""

from __future__ import annotations

from scheduler_api.engine import QoSClass

from .ledger import NodeLedger, ZoneLedger
from .meta import DemoContext
from .place_upstream import SCHEDULER, place_on_zones
from .pods import OwnerKind, PodDraft, guaranteed, new_pod
from .quantity import CPU, GIB, HUGEPAGES_1G, HUGEPAGES_2M, MEMORY, MIB

MEMORY_MANAGER_ATTRIBUTE = {"name": "memoryManagerPolicy", "value": "Static"}
# Pool sizes booted per NUMA node (hugepagesz=1G hugepages=N and the 2M pool), largest
# pages first, each a whole number of pages.
POOL_TARGETS = ((HUGEPAGES_1G, 32 * GIB, GIB), (HUGEPAGES_2M, 2 * GIB, 2 * MIB))
# Regular memory a zone (and the node) keeps free beside its pools.
MEMORY_LEFT = 8 * GIB
HUGEPAGES_PODS = 3

# (namespace, app, image, CPU choices, memory per CPU, hugepages size, hugepages per CPU)
HugepagesApp = tuple[str, str, str, tuple[int, ...], int, str, int]
_HUGEPAGES_APPS: tuple[HugepagesApp, ...] = (
    ("team-net", "packet-gw", "ghcr.io/acme/packet-gw:3.2.1", (2, 4, 8), GIB, HUGEPAGES_1G, GIB),
    (
        "team-data",
        "postgres-hp",
        "docker.io/library/postgres:16.4",
        (2, 4),
        4 * GIB,
        HUGEPAGES_2M,
        256 * MIB,
    ),
)


def dedicate(ledger: NodeLedger, pods: list[PodDraft]) -> list[PodDraft]:
    """The node's pods once it is kept for Guaranteed workloads (as latency-sensitive
    nodes are, by a taint): its DaemonSets, Guaranteed and finished pods; the
    shared-pool pods the fleet's filling put there are left out, and their requests
    given back."""
    kept = []
    for draft in pods:
        if (
            draft.owner_kind == OwnerKind.DAEMONSET
            or draft.terminated
            or draft.qos_class() == QoSClass.GUARANTEED
        ):
            kept.append(draft)
        else:
            ledger.add({name: -amount for name, amount in draft.requests().items()})
    return kept


def add_memory_manager(ctx: DemoContext, ledger: NodeLedger) -> list[PodDraft]:
    """Boot the node's hugepages pools, then place a few Guaranteed pods using them."""
    boot_pools(ledger)
    pods = []
    for ordinal in range(HUGEPAGES_PODS):
        draft = hugepages_pod(ctx, _HUGEPAGES_APPS[ordinal % len(_HUGEPAGES_APPS)])
        if ledger.fits(draft.requests()) and place_on_zones(ledger, draft) is not None:
            ledger.add(draft.requests())
            pods.append(draft)
    return pods


def boot_pools(ledger: NodeLedger) -> None:
    """Each zone's pools, from the memory its pods and the node's leave free."""
    node_room = (
        ledger.allocatable[MEMORY]
        - ledger.requested.get(MEMORY, 0)
        - MEMORY_LEFT * len(ledger.zones)
    )
    for zone in ledger.zones:
        node_room -= _boot_zone(zone, max(0, min(node_room, zone.free(MEMORY) - MEMORY_LEFT)))
    for name, _, _ in POOL_TARGETS:
        pools = sum(zone.capacity[name] for zone in ledger.zones)
        ledger.capacity[name] = ledger.allocatable[name] = pools
        ledger.allocatable[MEMORY] -= pools


def _boot_zone(zone: ZoneLedger, room: int) -> int:
    """Book the zone's pools out of `room` bytes of its regular memory; the bytes used."""
    used = 0
    for name, target, page in POOL_TARGETS:
        pool = min(target, room - used) // page * page
        zone.capacity[name] = zone.allocatable[name] = pool
        zone.allocatable[MEMORY] -= pool
        used += pool
    return used


def hugepages_pod(ctx: DemoContext, profile: HugepagesApp) -> PodDraft:
    """A Guaranteed pod of `profile`: whole CPUs, memory and hugepages of one size."""
    namespace, app, image, cpu_choices, memory_per_cpu, size, per_cpu = profile
    cpus = ctx.rng.choice(cpu_choices)
    amounts = {CPU: cpus * 1000, MEMORY: cpus * memory_per_cpu, size: cpus * per_cpu}
    containers = [guaranteed(app, image, amounts)]
    return new_pod(ctx, namespace, app, OwnerKind.REPLICASET, containers, scheduler=SCHEDULER)
