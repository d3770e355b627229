"""The hypothesis strategies the engine's agreement tests share: clusters, nodes and pods
of each family, drawn once here so that no test module imports another.

KOORD_EXAMPLES, WHATIF_EXAMPLES, CAPACITY_EXAMPLES and KUBELET_EXAMPLES (=1000 for a
deeper local run) set how many examples each family's tests draw.
"""

from __future__ import annotations

import json
import os
from dataclasses import replace
from typing import NamedTuple

from hypothesis import HealthCheck, settings
from hypothesis import strategies as st

from scheduler_api.engine.koordinator.cache import KEPT
from scheduler_api.engine.koordinator.reference.plugin import (
    NodeRun,
    node_run,
    prefilter,
)
from scheduler_api.engine.koordinator.reference.state import KoordConfig
from scheduler_api.engine.kubelet.reference.bitmask import NUMAMask
from scheduler_api.engine.kubelet.reference.cpumanager import StaticPolicyOptions
from scheduler_api.engine.kubelet.reference.memorymanager import (
    MachineState,
    MemoryTable,
    NUMANodeState,
)
from scheduler_api.engine.kubelet.reference.node_config import (
    OPTION_FLAGS,
)
from scheduler_api.engine.model.snapshot import (
    ANN_CRANE_AWARENESS,
    ANN_CRANE_CPU_POLICY,
    ANN_KOORD_NUMA_SPEC,
    ANN_KOORD_RESERVATION_AFFINITY,
    ANN_KOORD_RESOURCE_SPEC,
    LABEL_CPU_BIND_POLICY,
    LABEL_KOORD_QOS,
    LABEL_NUMA_ALLOCATE_STRATEGY,
    LABEL_NUMA_TOPOLOGY_POLICY,
    AllocationSource,
    ClusterSnapshot,
    ContainerSpec,
    CPUExclusivePolicy,
    Flavour,
    LabelSelector,
    NodeSnapshot,
    PodAllocation,
    PodSpec,
    ReservationOwner,
    ReservationPhase,
    ReservationSnapshot,
    ResourceAmounts,
    TopologyManagerPolicy,
    TopologyManagerScope,
    Zone,
)
from tests.engine.data_cpu_topologies import (
    FAKE_TOPO_MULTI_SOCKET_DUAL_SOCKET_PER_NUMA_HT,
    TOPO_DUAL_SOCKET_MULTI_NUMA_PER_SOCKET_HT,
    TOPO_DUAL_SOCKET_MULTI_NUMA_PER_SOCKET_HT_LARGE,
    TOPO_TRIPLE_SOCKET_HT,
)
from tests.engine.data_nrt_builders import container, pod

GI = 2**30

# --- Koordinator nodes, pods and reservations ------------------------------------------


KOORD_SETTINGS = settings(
    max_examples=int(os.environ.get("KOORD_EXAMPLES", "120")),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)


NRT_POLICIES = [
    ("SingleNUMANodePodLevel",),
    ("Restricted",),
    ("BestEffort",),
    ("None",),
    ("BestEffortContainerLevel",),
]


EXCLUSIVE = [p.value for p in CPUExclusivePolicy]


PHASES = [ReservationPhase.AVAILABLE] * 3 + [ReservationPhase.FAILED]


Rows = list[tuple[int, int, int, int]]


@st.composite
def cpu_rows(draw: st.DrawFn) -> tuple[Rows, list[int]]:
    """(cpu, core, socket, numa) rows; siblings numbered apart or side by side."""
    sockets = draw(st.sampled_from([1, 1, 2]))
    per_socket = draw(st.sampled_from([1, 1, 2, 2, 3, 4]))
    cores = draw(st.integers(1, 6))
    threads = draw(st.sampled_from([1, 2, 2]))
    apart = draw(st.booleans())
    total_cores = sockets * per_socket * cores
    rows = []
    for core in range(total_cores):
        numa = core // cores
        for thread in range(threads):
            cpu = core + thread * total_cores if apart else core * threads + thread
            rows.append((cpu, core, numa // per_socket, numa))
    if draw(st.integers(0, 9)) == 0 and len(rows) > 1:
        rows.pop(draw(st.integers(0, len(rows) - 1)))  # a non-uniform layout
    return sorted(rows), list(range(sockets * per_socket))


@st.composite
def koord_zones(draw: st.DrawFn, rows: Rows, numas: list[int]) -> tuple[Zone, ...]:
    result = []
    ragged = draw(st.integers(0, 7)) == 0
    for numa in numas:
        cpus = sum(1 for row in rows if row[3] == numa) * 1000
        resources = {"cpu": ResourceAmounts(cpus, cpus - draw(st.sampled_from([0, 0, 500])), 0)}
        if not (ragged and numa == numas[-1]):
            memory = draw(st.integers(1, 8)) * GI
            resources["memory"] = ResourceAmounts(memory, memory, memory)
        result.append(Zone(numa, f"node-{numa}", resources))
    return tuple(result)


@st.composite
def held_pods(draw: st.DrawFn, rows: Rows, numas: list[int]) -> tuple[PodAllocation, ...]:
    cpus = [row[0] for row in rows]
    held = []
    for index in range(draw(st.integers(0, 3))):
        cpuset = frozenset(draw(st.sets(st.sampled_from(cpus), max_size=4)))
        numa = draw(st.sampled_from(numas))
        amounts = {"cpu": draw(st.sampled_from([500, 1000, 2000])), "memory": GI}
        held.append(PodAllocation(
            "ns", f"held-{index}", f"uid-held-{index}", AllocationSource.KOORDINATOR,
            cpuset=cpuset, numa_resources={numa: amounts} if draw(st.booleans()) else {},
            cpu_exclusive_policy=CPUExclusivePolicy(draw(st.sampled_from(EXCLUSIVE))),
            reservation_uid=draw(st.sampled_from(["", "", "uid-resv-0"])),
        ))  # fmt: skip
    if draw(st.booleans()):
        pinned = frozenset(draw(st.sets(st.sampled_from(cpus), max_size=2)))
        held.append(PodAllocation("ns", "pinned", "uid-pinned", AllocationSource.KUBELET,
                                  cpuset=pinned))  # fmt: skip
    return tuple(held)


@st.composite
def koord_nodes(draw: st.DrawFn) -> NodeSnapshot:
    rows, numas = draw(cpu_rows())
    cpus = [row[0] for row in rows]
    labels: dict[str, str] = {}
    bind = draw(st.sampled_from(["", "", "FullPCPUsOnly", "SpreadByPCPUs"]))
    if bind:
        labels[LABEL_CPU_BIND_POLICY] = bind
    label_policy = draw(st.sampled_from(["", "", "", "SingleNUMANode", "Restricted", "BestEffort"]))
    if label_policy:
        labels[LABEL_NUMA_TOPOLOGY_POLICY] = label_policy
    if draw(st.integers(0, 3)) == 0:
        labels[LABEL_NUMA_ALLOCATE_STRATEGY] = "MostAllocated"
    full_pcpus = draw(st.integers(0, 5)) == 0
    return NodeSnapshot(
        name="k1",
        flavour=Flavour.KOORDINATOR,
        labels=labels,
        allocatable={"cpu": len(cpus) * 1000, "memory": 64 * GI, "pods": draw(st.integers(1, 14))},
        requested={"cpu": draw(st.sampled_from([0, 0, 1000])), "pods": 0},
        topology_policies=draw(st.sampled_from(NRT_POLICIES)),
        zones=draw(koord_zones(rows, numas)),
        cpus=tuple(rows),
        cpu_manager_policy="static" if full_pcpus else "",
        cpu_manager_options={"full-pcpus-only": "true"} if full_pcpus else {},
        kubelet_reserved_cpus=frozenset(draw(st.sets(st.sampled_from(cpus), max_size=3))),
        allocations=draw(held_pods(rows, numas)),
    )


@st.composite
def reservations(draw: st.DrawFn, node: NodeSnapshot) -> tuple[ReservationSnapshot, ...]:
    cpus = [row[0] for row in node.cpus]
    numas = [zone.numa_id for zone in node.zones]
    result = []
    for index in range(draw(st.sampled_from([0, 0, 1, 2]))):
        cpuset = frozenset(draw(st.sets(st.sampled_from(cpus), max_size=2)))
        numa = draw(st.sampled_from(numas))
        reserved = {numa: {"cpu": 1000 * max(len(cpuset), 1)}} if draw(st.booleans()) else {}
        result.append(ReservationSnapshot(
            name=f"resv-{index}", uid=f"uid-resv-{index}", node_name=node.name,
            phase=draw(st.sampled_from(PHASES)),
            owners=(ReservationOwner(label_selector=LabelSelector(
                {"app": draw(st.sampled_from(["x", "y"]))})),),
            allocatable={"cpu": 1000 * max(len(cpuset), 1)},
            allocate_once=draw(st.booleans()),
            cpuset=cpuset,
            numa_resources=reserved,
        ))  # fmt: skip
    return tuple(result)


@st.composite
def koord_pods(draw: st.DrawFn) -> PodSpec:
    cpu = draw(st.sampled_from(["500m", "1", "2", "2", "3", "4", "4", "6"]))
    resources = {"cpu": cpu, "memory": draw(st.sampled_from(["256Mi", "1Gi", "3Gi"]))}
    labels = {"app": draw(st.sampled_from(["x", "z"]))}
    qos = draw(st.sampled_from(["LSR", "LSR", "LSE", "LS", ""]))
    if qos:
        labels[LABEL_KOORD_QOS] = qos
    annotations: dict[str, str] = {}
    spec: dict[str, str] = {}
    hardness = draw(st.sampled_from(["", "required", "preferred"]))
    if hardness:
        policy = draw(st.sampled_from(["FullPCPUs", "SpreadByPCPUs", "Default"]))
        spec[f"{hardness}CPUBindPolicy"] = policy
    exclusive = draw(st.sampled_from(["", "", "PCPULevel", "NUMANodeLevel"]))
    if exclusive:
        spec["preferredCPUExclusivePolicy"] = exclusive
    if spec or draw(st.booleans()):
        annotations[ANN_KOORD_RESOURCE_SPEC] = json.dumps(spec)
    if draw(st.integers(0, 3)) == 0:  # mostly no policy of its own: exclusivity only
        numa_spec = {
            "numaTopologyPolicy": draw(
                st.sampled_from(["SingleNUMANode", "Restricted", "", "", ""])
            ),
            "singleNUMANodeExclusive": draw(st.sampled_from(["Required", "Required", "Preferred"])),
        }
        annotations[ANN_KOORD_NUMA_SPEC] = json.dumps(numa_spec)
    if draw(st.integers(0, 9)) == 0:
        annotations[ANN_KOORD_RESERVATION_AFFINITY] = "{}"
    drawn = pod(container("c", resources), name="p", labels=labels, annotations=annotations,
                priority=draw(st.sampled_from([9000, 9000, 5000, None])))  # fmt: skip
    return replace(drawn, pod_resources=draw(maybe_pod_level_resources()))


KOORD_CONFIGS = st.sampled_from(
    [
        KoordConfig(),
        KoordConfig(numa_scoring_strategy="MostAllocated", scoring_strategy="MostAllocated"),
        KoordConfig(resource_weights={"cpu": 3, "memory": 1}),
    ]
)


# --- scheduler-plugins (NRT) nodes and clusters, the pods every family is asked about ----

POLICIES = [
    {"topologyManagerPolicy": "single-numa-node", "topologyManagerScope": "pod"},
    {"topologyManagerPolicy": "single-numa-node", "topologyManagerScope": "container"},
    {"topologyManagerPolicy": "restricted"},
    {},
]


FLAVOURS = [Flavour.UPSTREAM_V1ALPHA2, Flavour.UPSTREAM_V1ALPHA1, Flavour.KOORDINATOR, None]


# WHATIF_EXAMPLES=1000 for a deeper local run.
WHATIF_SETTINGS = settings(
    max_examples=int(os.environ.get("WHATIF_EXAMPLES", "60")),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)


@st.composite
def nrt_zones(draw: st.DrawFn, count: int) -> tuple[Zone, ...]:
    result = []
    for index in range(count):
        numa = draw(st.sampled_from([index, index, index, 0]))  # sometimes a duplicate id
        cpu_cap = draw(st.integers(1, 16)) * 1000
        resources = {
            "cpu": ResourceAmounts(cpu_cap, cpu_cap, draw(st.integers(0, cpu_cap))),
            "memory": ResourceAmounts(16 * GI, 16 * GI, draw(st.integers(0, 16)) * GI),
        }
        if draw(st.booleans()):
            devices = draw(st.integers(0, 4))
            resources["example.com/dev"] = ResourceAmounts(4, 4, devices)
        result.append(Zone(numa, f"node-{index}", resources))
    return tuple(result)


@st.composite
def nodes(draw: st.DrawFn, name: str) -> NodeSnapshot:
    listed = draw(nrt_zones(draw(st.integers(1, 4))))
    allocatable: dict[str, int] = {"pods": draw(st.integers(1, 20))}
    for zone in listed:
        for res, amounts in zone.resources.items():
            allocatable[res] = allocatable.get(res, 0) + amounts.capacity
    used = draw(st.integers(0, 50)) / 100
    return NodeSnapshot(
        name=name,
        flavour=draw(st.sampled_from(FLAVOURS)),
        allocatable=allocatable,
        requested={"cpu": int(allocatable["cpu"] * used), "pods": 0},
        nrt_attributes=draw(st.sampled_from(POLICIES)),
        zones=listed,
        unschedulable=draw(st.booleans()) and draw(st.booleans()),
    )


@st.composite
def maybe_pod_level_resources(draw: st.DrawFn) -> dict[str, dict[str, int]]:
    """spec.resources as the API server defaults it (requests always there once limits
    are), on about one pod in four; {} (unset) on the rest."""
    if draw(st.integers(0, 3)):
        return {}
    requests = {"cpu": draw(st.sampled_from([1000, 2500, 4000, 8000]))}
    if draw(st.booleans()):
        requests["memory"] = draw(st.integers(1, 16)) * GI
    guaranteed = "memory" in requests and draw(st.booleans())
    return {"requests": requests, "limits": dict(requests) if guaranteed else {}}


@st.composite
def pods(draw: st.DrawFn) -> PodSpec:
    def container(name: str) -> ContainerSpec:
        cpu = draw(st.sampled_from([500, 1000, 2000, 3000, 4000, 6000]))
        requests = {"cpu": cpu, "memory": draw(st.integers(1, 8)) * GI}
        if draw(st.booleans()) and draw(st.booleans()):
            requests["example.com/dev"] = draw(st.integers(1, 2))
        guaranteed = draw(st.booleans()) or draw(st.booleans())
        return ContainerSpec(name, requests, requests if guaranteed else {})

    count = draw(st.integers(1, 2))
    init = (container("init"),) if draw(st.booleans()) and draw(st.booleans()) else ()
    return PodSpec("ns", "p", containers=tuple(container(f"c{i}") for i in range(count)),
                   init_containers=init,
                   pod_resources=draw(maybe_pod_level_resources()))  # fmt: skip


@st.composite
def clusters(draw: st.DrawFn) -> ClusterSnapshot:
    count = draw(st.integers(1, 6))
    return ClusterSnapshot(tuple(draw(nodes(f"n{i}")) for i in range(count)))


# --- capacity counts and crane --------------------------------------------------------

CAPACITY_LIMIT = 200


CAPACITY_SETTINGS = settings(
    max_examples=int(os.environ.get("CAPACITY_EXAMPLES", "150")),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)


@st.composite
def crane_nodes(draw: st.DrawFn) -> NodeSnapshot:
    node = draw(nodes("c0"))
    claims = tuple(
        PodAllocation("ns", f"held-{i}", f"uid-{i}", AllocationSource.CRANE,
                      numa_resources={zone.numa_id: {"cpu": draw(st.sampled_from([1000, 2000]))}})
        for i, zone in enumerate(node.zones) if draw(st.booleans())
    )  # fmt: skip
    return replace(
        node,
        flavour=draw(st.sampled_from([Flavour.CRANE, Flavour.CRANE, Flavour.CRANE, None])),
        crane_cpu_manager_policy=draw(st.sampled_from(["Static", "Static", "None"])),
        crane_topology_policy=draw(st.sampled_from(["SingleNUMANodePodLevel", "", ""])),
        allocations=claims,
        allocatable={**node.allocatable, "pods": draw(st.integers(1, 60))},
        requested=node.requested if draw(st.booleans()) else {"pods": 0},
    )


@st.composite
def crane_pods(draw: st.DrawFn) -> PodSpec:
    base = draw(pods())
    annotations: dict[str, str] = {}
    if draw(st.booleans()):
        annotations[ANN_CRANE_AWARENESS] = draw(st.sampled_from(["true", "false", "bogus"]))
    if draw(st.integers(0, 3)) == 0:
        annotations[ANN_CRANE_CPU_POLICY] = draw(st.sampled_from(["none", "exclusive", "numa"]))
    if draw(st.integers(0, 5)) == 0:
        scalar = {"cpu": 2000, "example.com/dev": 1}
        base = replace(base, containers=(ContainerSpec("dev", scalar, scalar),))
    return replace(base, annotations=annotations)


KoordCase = tuple[NodeSnapshot, PodSpec, tuple[ReservationSnapshot, ...]]


# --- Koordinator nodes where NUMA amounts decide, and the run a fast path starts from ----


@st.composite
def roomy_koord_nodes(draw: st.DrawFn) -> NodeSnapshot:
    """A Koordinator node whose NUMA nodes hold many small copies: more memory per NUMA
    node and room for a hundred pods, so the NUMA amounts decide."""
    node = draw(koord_nodes())
    zones = []
    for zone in node.zones:
        resources = dict(zone.resources)
        if "memory" in resources:
            memory = draw(st.integers(2, 24)) * GI
            resources["memory"] = ResourceAmounts(memory, memory, memory)
        zones.append(replace(zone, resources=resources))
    allocatable = {**node.allocatable, "memory": 512 * GI, "pods": draw(st.integers(20, 110))}
    return replace(node, zones=tuple(zones), allocatable=allocatable)


@st.composite
def roomy_cases(draw: st.DrawFn) -> KoordCase:
    node = draw(st.one_of(roomy_koord_nodes(), koord_nodes()))
    return node, draw(koord_pods()), draw(reservations(node))


def koord_run(case: KoordCase, config: KoordConfig) -> NodeRun | None:
    node, spec, held = case
    state = prefilter(spec, config)
    if state.error is not None or state.skip:
        return None
    run = node_run(node, spec, state, held, config, KEPT)  # as the fast paths run it
    return run if isinstance(run, NodeRun) else None


# --- the kubelet's static CPU manager: CPU hints and admissions ------------------------

KUBELET_SETTINGS = settings(
    max_examples=int(os.environ.get("KUBELET_EXAMPLES", "200")),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)


# kubelet's test machines `cpu_rows` does not draw: more sockets than NUMA nodes (which
# align-by-socket refuses), and 80 and 256 CPUs on 4 and 8 NUMA nodes.
HINT_FIXTURES = [
    TOPO_TRIPLE_SOCKET_HT,
    FAKE_TOPO_MULTI_SOCKET_DUAL_SOCKET_PER_NUMA_HT,
    TOPO_DUAL_SOCKET_MULTI_NUMA_PER_SOCKET_HT,
    TOPO_DUAL_SOCKET_MULTI_NUMA_PER_SOCKET_HT_LARGE,
]


@st.composite
def hint_cpu_rows(draw: st.DrawFn) -> Rows:
    """A machine's CPU table: `cpu_rows` (1-8 NUMA nodes on 1-2 sockets, SMT or not),
    sometimes with its NUMA ids spread apart (a machine whose memory-only NUMA nodes
    hold no CPU), or one of kubelet's test machines."""
    if draw(st.integers(0, 5)) == 0:
        return list(draw(st.sampled_from(HINT_FIXTURES)))
    rows, _ = draw(cpu_rows())
    stride, offset = draw(st.sampled_from([1, 1, 1, 2, 3])), draw(st.sampled_from([0, 0, 1]))
    return [(cpu, core, socket, numa * stride + offset) for cpu, core, socket, numa in rows]


@st.composite
def static_policy_options(draw: st.DrawFn) -> StaticPolicyOptions:
    """Any combination of the static policy's options that kubelet's own checks accept;
    align-by-socket is drawn whatever the machine, so it is sometimes one the machine
    refuses (`check_options_fit`)."""
    spread = draw(st.booleans())
    across_numa = not spread and draw(st.booleans())
    return StaticPolicyOptions(
        full_pcpus_only=not spread and draw(st.booleans()),
        distribute_cpus_across_numa=across_numa,
        align_by_socket=draw(st.booleans()),
        distribute_cpus_across_cores=spread,
        strict_cpu_reservation=draw(st.booleans()),
        prefer_align_by_uncore_cache=not spread and not across_numa and draw(st.booleans()),
    )


class CPUHintCase(NamedTuple):
    """The arguments of `cpu_hints` (the topology as its CPU table)."""

    rows: Rows
    available: frozenset[int]
    count: int
    reusable: frozenset[int]
    options: StaticPolicyOptions
    reserved: frozenset[int]


@st.composite
def cpu_hint_cases(draw: st.DrawFn) -> CPUHintCase:
    """A hint question: the free CPUs mostly many or mostly few; reusable CPUs that may
    also be free (kubelet counts those twice); reserved CPUs; a count from a negative
    one to more than the machine has; now and then a CPU id the machine does not have."""
    rows = draw(hint_cpu_rows())
    cpus = sorted(row[0] for row in rows)
    ids = st.sampled_from(cpus)
    if draw(st.integers(0, 14)) == 0:
        ids = st.one_of(ids, st.just(cpus[-1] + 1))
    drawn = frozenset(draw(st.sets(ids)))
    available = drawn if draw(st.booleans()) else frozenset(cpus) - drawn
    count = draw(st.one_of(st.integers(1, 12), st.integers(1, len(cpus) + 2)))
    if draw(st.integers(0, 9)) == 5:  # hypothesis favours the ends of a range
        count = draw(st.sampled_from([0, -1]))  # no preference, or refused
    reusable = frozenset(draw(st.sets(ids, max_size=4)))
    reserved = frozenset(draw(st.sets(ids, max_size=3)))
    return CPUHintCase(rows, available, count, reusable, draw(static_policy_options()), reserved)


@st.composite
def kubelet_static_nodes(draw: st.DrawFn) -> NodeSnapshot:
    """A node whose kubelet runs the static CPU manager (`koord_nodes`' CPU tables,
    kubelet-pinned and reserved CPUs), under any Topology Manager policy and scope, with
    options the kubelet may refuse to start with."""
    node = draw(koord_nodes())
    options = draw(static_policy_options())
    flags = {key: "true" for key, attr in OPTION_FLAGS.items() if getattr(options, attr)}
    # alpha options need the gate (off by default): mostly on, so they are exercised
    gates = {"CPUManagerPolicyAlphaOptions": draw(st.sampled_from([True, True, False]))}
    group = draw(st.sampled_from([0, 2, 4]))  # CPUs per uncore cache group, 0: unknown
    uncore = {cpu: numa * 1000 + core // group for cpu, core, _, numa in node.cpus} if group else {}
    return replace(
        node,
        flavour=Flavour.UPSTREAM_V1ALPHA2,
        cpu_manager_policy="static",
        cpu_manager_options=flags,
        kubelet_feature_gates=gates,
        uncore_caches=uncore,
        tm_policy=draw(st.sampled_from(list(TopologyManagerPolicy))),
        tm_scope=draw(st.sampled_from(list(TopologyManagerScope))),
    )


# --- nodes whose kubelet runs the Static Memory Manager -------------------------------

HUGEPAGES_1G = "hugepages-1Gi"


@st.composite
def memory_zones(
    draw: st.DrawFn, numas: list[int], hugepages: bool, plain: bool
) -> tuple[Zone, ...]:
    """NUMA zones with cpu, memory (some with reserved memory) and, on some nodes, 1Gi
    hugepages; unless `plain`, a few with `available` out of 0..allocatable or with no
    hugepages listed."""
    result = []
    for numa in numas:
        cpu = draw(st.integers(2, 8)) * 1000
        allocatable = draw(st.integers(1, 8)) * GI
        reserved = draw(st.sampled_from([0, GI // 2, GI]))
        available = draw(st.integers(0, allocatable // (GI // 4))) * (GI // 4)
        if not plain and draw(st.integers(0, 3)) == 0:
            available = allocatable + GI  # out of bounds: the fast path declines
        resources = {
            "cpu": ResourceAmounts(cpu, cpu, draw(st.integers(0, cpu // 500)) * 500),
            "memory": ResourceAmounts(allocatable + reserved, allocatable, available),
        }
        if hugepages and (plain or draw(st.integers(0, 3))):
            pages = draw(st.integers(0, 4)) * GI
            resources[HUGEPAGES_1G] = ResourceAmounts(4 * GI, 4 * GI, pages)
        result.append(Zone(numa, f"node-{numa}", resources))
    return tuple(result)


@st.composite
def memory_manager_nodes(draw: st.DrawFn) -> NodeSnapshot:
    """An upstream-NRT node whose kubelet runs the Static Memory Manager: 1-4 NUMA zones,
    the kubelet's Topology Manager policy and scope as the NRT publishes them (mostly
    single-numa-node) or, on some nodes, as the kubelet reports them otherwise; pods
    holding memory on one NUMA node or, on some nodes, across two (a multi-NUMA group)."""
    numas = list(range(draw(st.integers(1, 4))))
    plain = draw(st.integers(0, 2)) > 0  # mostly a node where the fast path may count
    zones = draw(memory_zones(numas, draw(st.booleans()), plain))
    single = TopologyManagerPolicy.SINGLE_NUMA_NODE
    policy = single if plain else draw(st.sampled_from(list(TopologyManagerPolicy)))
    scope = draw(st.sampled_from(list(TopologyManagerScope)))
    attributes = {"topologyManagerPolicy": policy.value, "topologyManagerScope": scope.value,
                  "memoryManagerPolicy": "Static"}  # fmt: skip
    held = []
    for index in range(draw(st.integers(0, 2))):
        span = draw(st.sets(st.sampled_from(numas), min_size=1, max_size=1 if plain else 2))
        numa_resources = {numa: {"cpu": 1000, "memory": GI // 2} for numa in span}
        held.append(PodAllocation(
            "ns", f"held-{index}", f"uid-held-{index}", AllocationSource.KUBELET,
            numa_resources=numa_resources,
        ))  # fmt: skip
    rows = [(cpu, cpu, 0, numa) for numa in numas for cpu in range(numa * 4, numa * 4 + 4)]
    allocatable: dict[str, int] = {"pods": draw(st.integers(1, 30))}
    for zone in zones:
        for name, amounts in zone.resources.items():
            allocatable[name] = allocatable.get(name, 0) + amounts.allocatable
    return NodeSnapshot(
        name="mm1",
        flavour=Flavour.UPSTREAM_V1ALPHA2,
        allocatable=allocatable,
        requested={"cpu": 0, "pods": 0},
        nrt_attributes=attributes,
        zones=zones,
        cpus=tuple(rows) if draw(st.booleans()) else (),
        cpu_manager_policy=draw(st.sampled_from(["static", "none", ""])),
        tm_policy=None if plain else draw(st.sampled_from([None, *TopologyManagerPolicy])),
        tm_scope=None if plain else draw(st.sampled_from([None, *TopologyManagerScope])),
        allocations=tuple(held),
    )


@st.composite
def memory_pods(draw: st.DrawFn) -> PodSpec:
    """Mostly Guaranteed pods of fractional or whole CPUs asking memory and, some, 1Gi
    hugepages; one or two containers, a few with an init container."""
    guaranteed = draw(st.integers(0, 5)) > 0
    cpus = [250, 500, 1500] if draw(st.integers(0, 2)) else [250, 500, 1000, 2000]

    def container(name: str) -> ContainerSpec:
        requests = {
            "cpu": draw(st.sampled_from(cpus)),
            "memory": draw(st.integers(1, 12)) * (GI // 4),
        }
        if draw(st.integers(0, 3)) == 0:
            requests[HUGEPAGES_1G] = draw(st.integers(1, 2)) * GI
        return ContainerSpec(name, requests, dict(requests) if guaranteed else {})

    containers = tuple(container(f"c{i}") for i in range(draw(st.sampled_from([1, 1, 1, 2]))))
    init = (container("init"),) if draw(st.integers(0, 7)) == 0 else ()
    return PodSpec("ns", "p", containers=containers, init_containers=init)


# --- Memory Manager machine states, for its hints -------------------------------------


class MemoryHintCase(NamedTuple):
    state: MachineState
    requested: dict[str, int]
    reusable: dict[NUMAMask, dict[str, int]]


@st.composite
def memory_hint_cases(draw: st.DrawFn) -> MemoryHintCase:
    """A Static Memory Manager machine of 1-8 NUMA nodes (some with ids apart), memory
    and, on some nodes, 1Gi hugepages (a few nodes without a table); some nodes holding
    memory alone, some grouped in multi-NUMA groups (some groups holding memory, one
    naming a node the machine lacks); a request of one or both, and reusable memory on
    a few masks."""
    numas = sorted(draw(st.sets(st.integers(0, 9), min_size=1, max_size=8)))
    resources = ["memory", HUGEPAGES_1G]
    nodes = {}
    for numa in numas:
        tables = {}
        for name in resources:
            if draw(st.integers(0, 5)) == 0:
                continue  # the node lacks this table
            allocatable = draw(st.integers(0, 8)) * GI
            free = draw(st.integers(0, 8)) * GI // 2
            tables[name] = MemoryTable(allocatable, 0, allocatable, 0, free)
        nodes[numa] = NUMANodeState(tuple(sorted(tables.items())), (numa,),
                                    draw(st.sampled_from([0, 0, 1])))  # fmt: skip
    for _ in range(draw(st.integers(0, 2))):
        group = sorted(draw(st.sets(st.sampled_from(numas), min_size=1, max_size=3)))
        if draw(st.integers(0, 5)) == 0:
            group.append(10)  # a NUMA node the machine lacks
        held = draw(st.sampled_from([0, 1, 2]))
        for numa in group:
            if numa in nodes:
                nodes[numa] = replace(nodes[numa], cells=tuple(group), assignments=held)
    requested = {
        name: draw(st.integers(1, 20)) * GI // 2
        for name in draw(st.sets(st.sampled_from(resources), min_size=1))
    }
    reusable = {}
    for _ in range(draw(st.integers(0, 2))):
        mask = NUMAMask.of(draw(st.sets(st.sampled_from(numas), min_size=1, max_size=2)))
        reusable[mask] = {name: draw(st.integers(0, 4)) * GI for name in requested}
    return MemoryHintCase(MachineState.of(nodes), requested, reusable)
