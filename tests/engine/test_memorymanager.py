"""The Static Memory Manager against kubernetes v1.34 policy_static_test.go (ported as data:
TestStaticPolicyAllocate, ...WithInitContainers, ...WithRestartableInitContainers,
TestStaticPolicyGetTopologyHints, Test_getPodRequestedResources), then merged with the
CPU manager's hints by the Topology Manager on node snapshots (`kubelet_pinning`)."""

from __future__ import annotations

from dataclasses import dataclass, field, replace

import pytest

from scheduler_api.engine.kubelet.reference.admission import (
    kubelet_pinning,
)
from scheduler_api.engine.kubelet.reference.memory_state import (
    GROUPS_NOT_PUBLISHED,
    POLICY_NOT_PUBLISHED,
    node_memory,
)
from scheduler_api.engine.kubelet.reference.memorymanager import (
    NO_DEFAULT_HINT,
    NO_DEFAULT_PREFERRED,
    NO_EXTENDED_HINT,
    NO_EXTENDED_PREFERRED,
    VIOLATES_NUMA_ALLOCATION,
    Block,
    MachineState,
    MemoryManagerError,
    MemoryTable,
    NUMANodeState,
    StaticPolicy,
    pod_memory_requests,
)
from scheduler_api.engine.kubelet.reference.node_config import (
    kubelet_class,
)
from scheduler_api.engine.kubelet.reference.topologymanager import TopologyHint
from scheduler_api.engine.model.results import ReasonCheck
from scheduler_api.engine.model.snapshot import (
    AllocationSource,
    ClusterSnapshot,
    ContainerSpec,
    Flavour,
    NodeSnapshot,
    PodAllocation,
    PodSpec,
    ResourceAmounts,
    TopologyManagerPolicy,
    TopologyManagerScope,
    Zone,
)
from scheduler_api.engine.whatif.admission import pinned_admission
from scheduler_api.engine.whatif.cache import kubelet_admission
from scheduler_api.engine.whatif.evaluate import evaluate

MB, GB = 2**20, 2**30
HP1G, HP2M = "hugepages-1Gi", "hugepages-2Mi"


# --- upstream's machine states, as data ---------------------------------------------


def table(allocatable: int, free: int, reserved: int, system: int, total: int) -> MemoryTable:
    """Upstream's field order: Allocatable, Free, Reserved, SystemReserved, TotalMemSize."""
    return MemoryTable(total, system, allocatable, reserved, free)


def numa(
    memory: MemoryTable, hugepages: MemoryTable, cells: tuple[int, ...], assignments: int = 0,
    hugepages_name: str = HP1G,
) -> NUMANodeState:  # fmt: skip
    tables = tuple(sorted({"memory": memory, hugepages_name: hugepages}.items()))
    return NUMANodeState(tables, cells, assignments)


def state(*nodes: NUMANodeState) -> MachineState:
    return MachineState.of(dict(enumerate(nodes)))


HP_FREE_1G = table(GB, GB, 0, 0, GB)
HP_USED_1G = table(GB, 0, GB, 0, GB)


def ctr(
    name: str, memory: int, hugepages: int | None = None, sidecar: bool = False
) -> ContainerSpec:
    amounts = {"cpu": 1000, "memory": memory}
    if hugepages is not None:
        amounts[HP1G] = hugepages
    return ContainerSpec(name, amounts, amounts, restart_policy="Always" if sidecar else "")


def guaranteed_pod(*containers: ContainerSpec, init: tuple[ContainerSpec, ...] = ()) -> PodSpec:
    return PodSpec("ns", "pod1", uid="pod1", containers=containers, init_containers=init)


GUARANTEED = guaranteed_pod(ctr("container1", GB, GB))
BURSTABLE = PodSpec(
    "ns",
    "pod1",
    containers=(
        ContainerSpec(
            "container1",
            {"cpu": 1000, "memory": GB, HP1G: GB},
            {"cpu": 1000, "memory": 2 * GB, HP1G: 2 * GB},
        ),
    ),
)
NO_AFFINITY = TopologyHint(None, False)  # upstream's &TopologyHint{}


@dataclass(frozen=True)
class AllocateCase:
    name: str
    machine: MachineState
    pod: PodSpec
    hint: TopologyHint = NO_AFFINITY
    assignments: dict[str, list[Block]] = field(default_factory=dict)
    expected_state: MachineState | None = None
    expected_blocks: dict[str, list[Block]] = field(default_factory=dict)
    error: str | None = None


ONE_NUMA_FREE = state(numa(table(1536 * MB, 1536 * MB, 0, 512 * MB, 2 * GB), HP_FREE_1G, (0,)))
ONE_NUMA_USED = state(
    numa(table(1536 * MB, 512 * MB, 1024 * MB, 512 * MB, 2 * GB), HP_USED_1G, (0,), 2)
)
NUMA0_HALF_USED_1_2_SMALL = state(
    numa(table(GB, 512 * MB, 512 * MB, 512 * MB, 1536 * MB), HP_FREE_1G, (0,), 1),
    numa(table(512 * MB, 512 * MB, 0, 512 * MB, 1536 * MB), HP_FREE_1G, (1,)),
    numa(table(512 * MB, 512 * MB, 0, 512 * MB, 1536 * MB), HP_FREE_1G, (2,)),
)
SMALL_0_GROUPED_1_2 = state(
    numa(table(512 * MB, 512 * MB, 0, 512 * MB, GB), HP_FREE_1G, (0,)),
    numa(table(1536 * MB, 512 * MB, GB, 512 * MB, 2 * GB), HP_FREE_1G, (1, 2), 1),
    numa(table(1536 * MB, 512 * MB, GB, 512 * MB, 2 * GB), HP_FREE_1G, (1, 2), 1),
)
FOUR_HALF_GIB = state(
    *(numa(table(512 * MB, 512 * MB, 0, 512 * MB, GB), HP_FREE_1G, (n,)) for n in range(4))
)
FOUR_HALF_GIB_AFTER = state(
    numa(table(512 * MB, 0, 512 * MB, 512 * MB, GB), HP_USED_1G, (0, 1), 2),
    numa(table(512 * MB, 0, 512 * MB, 512 * MB, GB), HP_FREE_1G, (0, 1), 2),
    numa(table(512 * MB, 512 * MB, 0, 512 * MB, GB), HP_FREE_1G, (2,)),
    numa(table(512 * MB, 512 * MB, 0, 512 * MB, GB), HP_FREE_1G, (3,)),
)

ALLOCATE_CASES = [
    AllocateCase(
        "a non-guaranteed pod is left alone",
        ONE_NUMA_FREE, BURSTABLE, expected_state=ONE_NUMA_FREE,
    ),
    AllocateCase(
        "a container already in the state is left alone",
        ONE_NUMA_USED, GUARANTEED,
        assignments={"container1": [Block((0,), "memory", GB)]},
        expected_state=ONE_NUMA_USED,
        expected_blocks={"container1": [Block((0,), "memory", GB)]},
    ),
    AllocateCase(
        "no affinity from the topology manager: the default hint is computed",
        ONE_NUMA_FREE, GUARANTEED, expected_state=ONE_NUMA_USED,
        expected_blocks={"container1": [Block((0,), "memory", GB), Block((0,), HP1G, GB)]},
    ),
    AllocateCase(
        "no affinity and no NUMA node with enough memory: no default hint",
        ONE_NUMA_USED, guaranteed_pod(ctr("container2", GB, GB)), error=NO_DEFAULT_HINT,
    ),
    AllocateCase(
        "a preferred hint without affinity, but the default hint is not preferred",
        NUMA0_HALF_USED_1_2_SMALL, guaranteed_pod(ctr("container2", GB, GB)),
        hint=TopologyHint(None, True), error=NO_DEFAULT_PREFERRED,
    ),
    AllocateCase(
        "a hint too small that no group including it can extend",
        SMALL_0_GROUPED_1_2, GUARANTEED, hint=TopologyHint({0}, False), error=NO_EXTENDED_HINT,
    ),
    AllocateCase(
        "a preferred hint extended only to a non-preferred one",
        NUMA0_HALF_USED_1_2_SMALL, guaranteed_pod(ctr("container2", GB, GB)),
        hint=TopologyHint({1}, True), error=NO_EXTENDED_PREFERRED,
    ),
    AllocateCase(
        "memory too big for one NUMA node is allocated from two",
        FOUR_HALF_GIB, GUARANTEED, hint=TopologyHint(None, True),
        expected_state=FOUR_HALF_GIB_AFTER,
        expected_blocks={
            "container1": [Block((0, 1), "memory", GB), Block((0, 1), HP1G, GB)]
        },
    ),
    AllocateCase(
        "a multi-NUMA hint over a node holding single-NUMA memory is refused",
        NUMA0_HALF_USED_1_2_SMALL, guaranteed_pod(ctr("container2", 512 * MB)),
        hint=TopologyHint({0, 1}, False), error=VIOLATES_NUMA_ALLOCATION,
    ),
]  # fmt: skip


def _blocks(policy: StaticPolicy) -> dict[str, list[Block]]:
    return {
        name: sorted(blocks, key=lambda b: b.resource)
        for name, blocks in policy.assignments.items()
    }


@pytest.mark.parametrize("case", ALLOCATE_CASES, ids=lambda c: c.name)
def test_static_policy_allocate(case: AllocateCase) -> None:
    policy = StaticPolicy(case.machine, case.assignments)
    if case.error is not None:
        with pytest.raises(MemoryManagerError) as raised:
            policy.allocate(case.pod, case.pod.containers[0], case.hint)
        assert str(raised.value) == case.error
        return
    policy.allocate(case.pod, case.pod.containers[0], case.hint)
    assert policy.state == case.expected_state
    assert _blocks(policy) == {
        k: sorted(v, key=lambda b: b.resource) for k, v in case.expected_blocks.items()
    }


# --- init containers and sidecars (their memory reused, or not) ---------------------


@dataclass(frozen=True)
class InitCase:
    name: str
    free: int  # memory and hugepages-1Gi allocatable on NUMA 0 (both free)
    init: tuple[ContainerSpec, ...]
    apps: tuple[ContainerSpec, ...]
    blocks: dict[str, int]  # what each container holds in the end (memory and hugepages)
    reserved: int
    assignments: int


INIT_CASES = [
    InitCase(
        "init containers 1Gi and 2Gi, apps 3Gi and 4Gi: the apps reuse the init memory",
        8 * GB, (ctr("init1", GB, GB), ctr("init2", 2 * GB, 2 * GB)),
        (ctr("c1", 3 * GB, 3 * GB), ctr("c2", 4 * GB, 4 * GB)),
        {"init1": 0, "init2": 0, "c1": 3 * GB, "c2": 4 * GB}, 7 * GB, 8,
    ),
    InitCase(
        "init containers 4Gi and 3Gi, apps 2Gi and 1Gi: the init memory covers the apps",
        8 * GB, (ctr("init1", 4 * GB, 4 * GB), ctr("init2", 3 * GB, 3 * GB)),
        (ctr("c1", 2 * GB, 2 * GB), ctr("c2", GB, GB)),
        {"init1": 0, "init2": GB, "c1": 2 * GB, "c2": GB}, 4 * GB, 8,
    ),
    InitCase(
        "init containers 7Gi and 4Gi, apps 4Gi and 3Gi: the apps fit in the largest init's",
        8 * GB, (ctr("init1", 7 * GB, 7 * GB), ctr("init2", 4 * GB, 4 * GB)),
        (ctr("c1", 4 * GB, 4 * GB), ctr("c2", 3 * GB, 3 * GB)),
        {"init1": 0, "init2": 0, "c1": 4 * GB, "c2": 3 * GB}, 7 * GB, 8,
    ),
    InitCase(
        "init containers 7Gi and 4Gi, apps 5Gi and 2Gi on 10Gi",
        10 * GB, (ctr("init1", 7 * GB, 7 * GB), ctr("init2", 4 * GB, 4 * GB)),
        (ctr("c1", 5 * GB, 5 * GB), ctr("c2", 2 * GB, 2 * GB)),
        {"init1": 0, "init2": 0, "c1": 5 * GB, "c2": 2 * GB}, 7 * GB, 8,
    ),
    InitCase(
        "a sidecar's memory is not reused: it keeps running",
        7 * GB,
        (ctr("init1", GB, GB), ctr("sidecar2", 2 * GB, 2 * GB, sidecar=True),
         ctr("init3", 3 * GB, 3 * GB), ctr("sidecar4", 4 * GB, 4 * GB, sidecar=True)),
        (ctr("c1", GB, GB),),
        {"init1": 0, "sidecar2": 2 * GB, "init3": 0, "sidecar4": 4 * GB, "c1": GB}, 7 * GB, 10,
    ),
]  # fmt: skip


@pytest.mark.parametrize("case", INIT_CASES, ids=lambda c: c.name)
def test_static_policy_allocate_with_init_containers(case: InitCase) -> None:
    memory = table(case.free, case.free, 0, 512 * MB, case.free + 512 * MB)
    hugepages = table(case.free, case.free, 0, 0, case.free)
    policy = StaticPolicy(state(numa(memory, hugepages, (0,))))
    pod = guaranteed_pod(*case.apps, init=case.init)
    for container in (*pod.init_containers, *pod.containers):
        policy.allocate(pod, container, NO_AFFINITY)
    held = {name: {b.size for b in blocks} for name, blocks in policy.assignments.items()}
    assert held == {name: {size} for name, size in case.blocks.items()}
    node = policy.state.as_dict()[0]
    for resource in ("memory", HP1G):
        assert node.table(resource).reserved == case.reserved
        assert node.table(resource).free == case.free - case.reserved
    assert node.assignments == case.assignments and node.cells == (0,)


# --- GetTopologyHints ------------------------------------------------------------------


@dataclass(frozen=True)
class HintCase:
    name: str
    pod: PodSpec
    expected: dict[str, list[tuple[tuple[int, ...], bool]]] | None
    machine: MachineState = ONE_NUMA_FREE
    assignments: dict[str, list[Block]] = field(default_factory=dict)


FOUR_GROUPED_0_1 = state(
    numa(table(1536 * MB, 0, 1536 * MB, 512 * MB, 2 * GB), HP_USED_1G, (0, 1), 2),
    numa(table(1536 * MB, GB, 512 * MB, 512 * MB, 2 * GB), HP_USED_1G, (0, 1), 2),
    numa(table(1536 * MB, 1536 * MB, 0, 512 * MB, 2 * GB), HP_FREE_1G, (2,)),
    numa(table(1536 * MB, 1536 * MB, 0, 512 * MB, 2 * GB), HP_FREE_1G, (3,)),
)
TWO_GROUPED_2M = state(
    numa(table(1536 * MB, 0, 1536 * MB, 512 * MB, 2 * GB),
         table(20 * MB, 0, 20 * MB, 0, 20 * MB), (0, 1), 2, HP2M),
    numa(table(1536 * MB, GB, 512 * MB, 512 * MB, 2 * GB),
         table(20 * MB, 16 * MB, 4 * MB, 0, 20 * MB), (0, 1), 2, HP2M),
)  # fmt: skip
SMALL_2M = {"cpu": 1000, "memory": GB, HP2M: 16 * MB}
BOTH = ("memory", HP1G)

HINT_CASES = [
    HintCase("a non-guaranteed pod gets no hints", BURSTABLE, None),
    HintCase(
        "a container already holding memory gets its blocks back as hints",
        GUARANTEED,
        {r: [((0,), True)] for r in BOTH},
        assignments={"container1": [Block((0,), "memory", GB), Block((0,), HP1G, GB)]},
    ),
    HintCase(
        "a new container: grouped nodes are skipped, the free ones are hints",
        guaranteed_pod(ctr("container2", GB, GB)),
        {r: [((2,), True), ((3,), True), ((2, 3), False)] for r in BOTH},
        machine=FOUR_GROUPED_0_1,
    ),
    HintCase(
        "blocks of fewer resources than requested give no hints",
        GUARANTEED, None, assignments={"container1": [Block((0,), "memory", GB)]},
    ),
    HintCase(
        "blocks of other resources than requested give no hints",
        GUARANTEED, None,
        assignments={"container1": [Block((0,), "memory", GB), Block((0,), HP2M, GB)]},
    ),
    HintCase(
        "blocks of another size than requested give no hints",
        GUARANTEED, None,
        assignments={"container1": [Block((0,), "memory", 512 * MB), Block((0,), HP1G, GB)]},
    ),
    HintCase(
        "one NUMA node would hold it by size, but both are grouped: only the group, not preferred",
        guaranteed_pod(ContainerSpec("container2", SMALL_2M, SMALL_2M)),
        {r: [((0, 1), False)] for r in ("memory", HP2M)},
        machine=TWO_GROUPED_2M,
    ),
]  # fmt: skip


@pytest.mark.parametrize("case", HINT_CASES, ids=lambda c: c.name)
def test_static_policy_get_topology_hints(case: HintCase) -> None:
    policy = StaticPolicy(case.machine, case.assignments)
    found = policy.container_hints(case.pod, case.pod.containers[0])
    if case.expected is None:
        assert found is None
        return
    assert found is not None
    got = {
        r: [(tuple(sorted(h.numa or ())), h.preferred) for h in hints] for r, hints in found.items()
    }
    assert got == case.expected


# --- getPodRequestedResources ------------------------------------------------------


def plain(name: str, size: int, hp: int | None = None, sidecar: bool = False) -> ContainerSpec:
    requests = {"memory": size, HP1G: size if hp is None else hp}
    return ContainerSpec(name, requests, restart_policy="Always" if sidecar else "")


POD_REQUEST_CASES = [
    ("the largest init container exceeds the apps together",
     (plain("c1", GB), plain("c2", 2 * GB)), (plain("i1", GB), plain("i2", 4 * GB)),
     {"memory": 4 * GB, HP1G: 4 * GB}),
    ("the apps together exceed the largest init container",
     (plain("c1", 2 * GB), plain("c2", 3 * GB)), (plain("i1", GB), plain("i2", 3 * GB)),
     {"memory": 5 * GB, HP1G: 5 * GB}),
    ("each resource is worked out on its own",
     (plain("c1", 2 * GB, GB), plain("c2", 3 * GB, 2 * GB)),
     (plain("i1", GB, GB), plain("i2", 3 * GB, 4 * GB)),
     {"memory": 5 * GB, HP1G: 4 * GB}),
    ("an init container after a sidecar needs the sidecar's memory too",
     (plain("c1", GB), plain("c2", 2 * GB)),
     (plain("s1", 2 * GB, sidecar=True), plain("i2", 4 * GB)),
     {"memory": 6 * GB, HP1G: 6 * GB}),
    ("the sidecars count with the apps",
     (plain("c1", 2 * GB), plain("c2", 3 * GB)),
     (plain("s1", 2 * GB, sidecar=True), plain("i2", 4 * GB)),
     {"memory": 7 * GB, HP1G: 7 * GB}),
]  # fmt: skip


@pytest.mark.parametrize(
    "name, apps, init, expected", POD_REQUEST_CASES, ids=[c[0] for c in POD_REQUEST_CASES]
)
def test_pod_requested_resources(name, apps, init, expected) -> None:  # type: ignore[no-untyped-def]
    pod = PodSpec("ns", "p", containers=apps, init_containers=init)
    assert pod_memory_requests(pod) == expected


# --- merged with the CPU manager on node snapshots ---------------------------------

FOUR_CPUS_A_NUMA = tuple((cpu, cpu, 0, cpu // 4) for cpu in range(8))


def memory_node(
    *,
    memory: tuple[tuple[int, int, int], ...] = ((16 * GB, 16 * GB, 16 * GB),) * 2,
    hugepages: tuple[tuple[int, int, int], ...] | None = None,
    policy: TopologyManagerPolicy = TopologyManagerPolicy.SINGLE_NUMA_NODE,
    scope: TopologyManagerScope = TopologyManagerScope.POD,
    memory_policy: str = "Static",
    **extra: object,
) -> NodeSnapshot:
    """Two NUMA zones of 4 CPUs (static CPU manager), each zone's memory (and 1Gi
    hugepages) as (capacity, allocatable, available)."""
    zones = []
    for index, amounts in enumerate(memory):
        resources = {"cpu": ResourceAmounts(4000, 4000, 4000), "memory": ResourceAmounts(*amounts)}
        if hugepages is not None:
            resources[HP1G] = ResourceAmounts(*hugepages[index])
        zones.append(Zone(index, f"node-{index}", resources))
    node = NodeSnapshot(
        "n",
        flavour=Flavour.UPSTREAM_V1ALPHA2,
        zones=tuple(zones),
        cpus=FOUR_CPUS_A_NUMA,
        cpu_manager_policy="static",
        tm_policy=policy,
        tm_scope=scope,
        memory_manager_policy=memory_policy,
        allocatable={"cpu": 8000, "memory": 256 * GB, HP1G: 16 * GB, "pods": 110},
    )
    return replace(node, **extra)  # type: ignore[arg-type]


def app(cpu: int, memory: int, hugepages: int = 0, name: str = "app") -> ContainerSpec:
    amounts = {"cpu": cpu, "memory": memory}
    if hugepages:
        amounts[HP1G] = hugepages
    return ContainerSpec(name, amounts, amounts)


def one(container: ContainerSpec) -> PodSpec:
    return PodSpec("ns", "p", uid="u", containers=(container,))


def test_a_hugepages_pod_no_single_numa_node_holds_is_refused_under_single_numa_node() -> None:
    # 3Gi of 1Gi hugepages, 2Gi on each NUMA node: only both together hold it
    node = memory_node(hugepages=((2 * GB, 2 * GB, 2 * GB),) * 2)
    pinning = kubelet_pinning(node, one(app(2000, GB, 3 * GB)))
    assert pinning.reason is not None and pinning.reason.check is ReasonCheck.KUBELET_ADMISSION
    assert "TopologyAffinityError" in pinning.reason.message
    assert f"the Memory Manager has no hint for {HP1G}, memory" in pinning.reason.message
    # best-effort admits it, its memory and hugepages spread over both NUMA nodes
    relaxed = replace(node, tm_policy=TopologyManagerPolicy.BEST_EFFORT)
    admitted = kubelet_pinning(relaxed, one(app(2000, GB, 3 * GB)))
    assert admitted.reason is None and admitted.memory_numa == frozenset({0, 1})
    assert admitted.cpuset is not None and len(admitted.cpuset) == 2


def grouped(numa_ids: tuple[int, ...]) -> PodAllocation:
    """A pod whose memory Koordinator's resource-status places over `numa_ids`."""
    spread = {n: {"memory": GB} for n in numa_ids}
    return PodAllocation("ns", "wide", "wide", AllocationSource.KOORDINATOR, numa_resources=spread)


def test_a_pod_is_refused_because_numa_0_is_in_a_multi_numa_group() -> None:
    # NUMA 0 has room for the pod alone, NUMA 1 none; a pod's memory already spans both
    three = ((16 * GB, 16 * GB, 12 * GB), (16 * GB, 16 * GB, 2 * GB), (16 * GB, 16 * GB, 2 * GB))
    free = memory_node(memory=three)
    pod = one(app(500, 8 * GB))  # no exclusive CPUs: the Memory Manager alone decides
    admitted = kubelet_pinning(free, pod)
    assert admitted.reason is None and admitted.memory_numa == frozenset({0})
    in_group = replace(free, allocations=(grouped((0, 1)),))
    refused = kubelet_pinning(in_group, pod)
    assert refused.reason is not None and "TopologyAffinityError" in refused.reason.message
    assert refused.reason.resource == "memory"
    assert GROUPS_NOT_PUBLISHED not in refused.notes  # the groups were published
    # best-effort: the group is the only hint, and the Memory Manager allocates it there
    wide = kubelet_pinning(replace(in_group, tm_policy=TopologyManagerPolicy.BEST_EFFORT), pod)
    assert wide.reason is None and wide.memory_numa == frozenset({0, 1})


def test_reserved_memory_per_numa_node_changes_the_answer() -> None:
    pod = one(app(2000, 14 * GB))
    roomy = memory_node()
    assert kubelet_pinning(roomy, pod).memory_numa == frozenset({0})
    # 4Gi reserved on NUMA 0 (reservedMemory): the pod goes to NUMA 1
    reserved_0 = memory_node(memory=((16 * GB, 12 * GB, 12 * GB), (16 * GB, 16 * GB, 16 * GB)))
    assert kubelet_pinning(reserved_0, pod).memory_numa == frozenset({1})
    # reserved on both: no single NUMA node holds 14Gi any more
    reserved = memory_node(memory=((16 * GB, 12 * GB, 12 * GB),) * 2)
    refused = kubelet_pinning(reserved, pod)
    assert refused.reason is not None and "TopologyAffinityError" in refused.reason.message


def test_the_answer_says_the_groups_are_not_published() -> None:
    # memory in use on NUMA 0 and no pod publishes where its memory is
    node = memory_node(memory=((16 * GB, 15 * GB, 10 * GB), (16 * GB, 15 * GB, 15 * GB)))
    assert GROUPS_NOT_PUBLISHED in node_memory(node).notes
    pinning = kubelet_pinning(node, one(app(2000, GB)))
    assert pinning.reason is None and GROUPS_NOT_PUBLISHED in pinning.notes
    admission = pinned_admission(node, one(app(2000, GB)))
    assert admission.admitted and GROUPS_NOT_PUBLISHED in admission.reason
    assert "Static Memory Manager" in admission.reason
    # nothing assigned anywhere: no group to guess, nothing said
    untouched = memory_node(memory=((16 * GB, 15 * GB, 15 * GB),) * 2)
    assert GROUPS_NOT_PUBLISHED not in node_memory(untouched).notes


def test_a_node_not_publishing_its_memory_policy_is_not_aligned_and_says_so() -> None:
    node = memory_node(memory_policy="", memory=((16 * GB, 12 * GB, 12 * GB),) * 2)
    pinning = kubelet_pinning(node, one(app(2000, 14 * GB)))
    assert pinning.reason is None and pinning.memory_numa is None
    assert POLICY_NOT_PUBLISHED in pinning.notes
    # the NRT attribute is read when the kubelet's configuration is not known
    published = replace(node, nrt_attributes={"memoryManagerPolicy": "Static"})
    assert kubelet_pinning(published, one(app(2000, 14 * GB))).reason is not None
    none = replace(node, nrt_attributes={"memoryManagerPolicy": "None"})
    answer = kubelet_pinning(none, one(app(2000, 14 * GB)))
    assert answer.reason is None and answer.notes == ()


def test_the_memory_manager_judges_a_pod_without_exclusive_cpus_on_a_cpu_none_node() -> None:
    node = memory_node(cpus=(), cpu_manager_policy="none")
    assert kubelet_class(node) == 0  # modelled: the Static Memory Manager runs
    pinning = kubelet_pinning(node, one(app(2000, 20 * GB)))
    assert pinning.reason is not None and pinning.cpuset is None
    assert kubelet_pinning(node, one(app(2000, 10 * GB))).memory_numa == frozenset({0})


def test_without_the_cpu_layout_a_pod_with_whole_cpus_is_not_checked() -> None:
    node = memory_node(cpus=(), cpu_manager_policy="")
    pinning = kubelet_pinning(node, one(app(2000, 8 * GB)))
    assert not pinning.checked and pinning.reason is None
    assert not pinned_admission(node, one(app(2000, 8 * GB))).checked


def test_without_the_cpu_layout_a_refusal_the_memory_alone_makes_still_stands() -> None:
    """The CPU hints are unknown, but a merge only narrows what one provider admits:
    hugepages no single NUMA node holds are refused under single-numa-node anyway."""
    node = memory_node(hugepages=((2 * GB, 2 * GB, 2 * GB),) * 2, cpus=(), cpu_manager_policy="")
    refused = kubelet_pinning(node, one(app(2000, GB, 3 * GB)))
    assert refused.reason is not None and refused.checked
    assert "TopologyAffinityError" in refused.reason.message
    assert "the Memory Manager's hints alone leave the policy no NUMA set" in refused.reason.message
    assert not pinned_admission(node, one(app(2000, GB, 3 * GB))).admitted
    # what the memory alone admits stays unchecked: the CPU hints could still refuse it
    fits = kubelet_pinning(node, one(app(2000, GB, GB)))
    assert fits.reason is None and not fits.checked
    # best-effort admits whatever the hints: nothing to refuse, still unchecked
    relaxed = replace(node, tm_policy=TopologyManagerPolicy.BEST_EFFORT)
    assert not kubelet_pinning(relaxed, one(app(2000, GB, 3 * GB))).checked


def test_under_the_container_scope_each_container_gets_its_own_numa_node() -> None:
    pod = PodSpec(
        "ns", "p", containers=(app(1000, 12 * GB, name="a"), app(1000, 12 * GB, name="b"))
    )
    container = memory_node(scope=TopologyManagerScope.CONTAINER)
    assert kubelet_pinning(container, pod).memory_numa == frozenset({0, 1})
    # the pod scope needs 24Gi on one NUMA node
    refused = kubelet_pinning(memory_node(scope=TopologyManagerScope.POD), pod)
    assert refused.reason is not None


def test_the_none_topology_policy_still_lets_the_memory_manager_refuse_what_fits_nowhere() -> None:
    node = memory_node(policy=TopologyManagerPolicy.NONE)
    refused = kubelet_pinning(node, one(app(500, 40 * GB)))
    assert refused.reason is not None and NO_DEFAULT_HINT in refused.reason.message
    assert "UnexpectedAdmissionError" in refused.reason.message
    assert kubelet_pinning(node, one(app(500, 20 * GB))).memory_numa == frozenset({0, 1})


def test_a_what_if_rejects_a_node_whose_memory_manager_refuses_the_pod() -> None:
    refusing = replace(memory_node(), name="small")
    roomy = replace(memory_node(memory=((64 * GB, 64 * GB, 64 * GB),) * 2), name="roomy")
    snapshot = ClusterSnapshot((refusing, roomy))
    pod = one(app(500, 20 * GB))  # Guaranteed, no whole CPUs
    result = evaluate(snapshot, pod, scheduler="scheduler-plugins")
    small = result.verdict("small")
    assert small.scheduler_fits and not small.fits
    assert small.admission is not None and not small.admission.admitted
    big = result.verdict("roomy")
    assert (
        big.fits and big.admission is not None and "Static Memory Manager" in big.admission.reason
    )


@pytest.mark.parametrize(
    "variant",
    [
        {},
        {"memory_policy": ""},
        {"memory_policy": "None"},
        {"allocations": (grouped((0, 1)),)},
        {"memory": ((16 * GB, 12 * GB, 12 * GB), (16 * GB, 16 * GB, 16 * GB))},
        {"memory": ((16 * GB, 16 * GB, 2 * GB), (16 * GB, 16 * GB, 16 * GB))},
        {"scope": TopologyManagerScope.CONTAINER},
        {"policy": TopologyManagerPolicy.BEST_EFFORT},
        {"flavour": Flavour.KOORDINATOR},
    ],
)
def test_remembered_admissions_of_memory_nodes_equal_the_reference(variant: dict) -> None:  # type: ignore[type-arg]
    node = memory_node(**variant)
    for pod in (one(app(2000, 14 * GB)), one(app(500, 8 * GB)), one(app(2000, GB, GB))):
        assert kubelet_admission(node, pod) == pinned_admission(node, pod)
