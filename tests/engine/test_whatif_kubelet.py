"""What the kubelet's static CPU manager pins behind a scheduler that picks no CPUs."""

from __future__ import annotations

from dataclasses import replace

import pytest

from scheduler_api.engine.kubelet.reference.admission import kubelet_pinning, pod_guaranteed_cpus
from scheduler_api.engine.model.results import ReasonCheck
from scheduler_api.engine.model.snapshot import (
    AllocationSource,
    ContainerSpec,
    NodeSnapshot,
    PodAllocation,
    PodSpec,
    ResourceAmounts,
    TopologyManagerPolicy,
    TopologyManagerScope,
    Zone,
)

GI = 2**30


def guaranteed_pod(cpus: int) -> PodSpec:
    amounts = {"cpu": cpus * 1000, "memory": GI}
    container = ContainerSpec("app", requests=amounts, limits=amounts)
    return PodSpec("ns", "p", uid="u", containers=(container,))


def static_node(
    cpus: tuple[tuple[int, int, int, int], ...],
    policy: TopologyManagerPolicy = TopologyManagerPolicy.BEST_EFFORT,
    **fields: object,
) -> NodeSnapshot:
    return NodeSnapshot(
        "n",
        cpus=cpus,
        cpu_manager_policy="static",
        tm_policy=policy,
        tm_scope=TopologyManagerScope.CONTAINER,
        **fields,  # type: ignore[arg-type]
    )


SMT_ONE_SOCKET = tuple((cpu, cpu % 4, 0, 0) for cpu in range(8))  # core k holds k and k+4
TWO_SOCKETS = tuple((cpu, cpu, cpu // 4, cpu // 4) for cpu in range(8))
TWO_SOCKETS_ONE_NUMA = tuple((cpu, cpu, cpu // 4, 0) for cpu in range(8))


@pytest.mark.parametrize("policy", [TopologyManagerPolicy.NONE, TopologyManagerPolicy.BEST_EFFORT])
def test_full_pcpus_only_does_not_count_the_siblings_of_reserved_cpus(policy) -> None:
    node = static_node(
        SMT_ONE_SOCKET,
        policy,
        cpu_manager_options={"full-pcpus-only": "true"},
        kubelet_reserved_cpus=frozenset({0, 1}),
    )
    pinning = kubelet_pinning(node, guaranteed_pod(6))
    assert pinning.cpuset is None
    assert pinning.reason is not None and pinning.reason.check is ReasonCheck.KUBELET_ADMISSION
    assert "available physical CPUs = 4" in pinning.reason.message


def test_full_pcpus_only_takes_the_cores_beside_no_reserved_cpu() -> None:
    node = static_node(
        SMT_ONE_SOCKET,
        cpu_manager_options={"full-pcpus-only": "true"},
        kubelet_reserved_cpus=frozenset({0, 1}),
    )
    assert kubelet_pinning(node, guaranteed_pod(4)).cpuset == {2, 3, 6, 7}


@pytest.mark.parametrize(
    ("cpus", "policy", "options", "why"),
    [
        pytest.param(
            TWO_SOCKETS,
            TopologyManagerPolicy.SINGLE_NUMA_NODE,
            {"align-by-socket": "true"},
            "single-numa-node",
            id="align-by-socket-under-single-numa-node",
        ),
        pytest.param(
            TWO_SOCKETS,
            TopologyManagerPolicy.BEST_EFFORT,
            {"full-pcpus-only": "true", "distribute-cpus-across-cores": "true"},
            "can not be used at the same time",
            id="full-pcpus-only-with-distribute-across-cores",
        ),
        pytest.param(
            TWO_SOCKETS_ONE_NUMA,
            TopologyManagerPolicy.BEST_EFFORT,
            {"align-by-socket": "true"},
            "more than the number of NUMA nodes",
            id="align-by-socket-on-more-sockets-than-numa-nodes",
        ),
    ],
)
def test_options_the_kubelet_refuses_at_start_up_refuse_the_pod_on_that_node_only(
    cpus, policy, options, why
) -> None:
    alpha_on = {"CPUManagerPolicyAlphaOptions": True}  # these options are alpha at v1.35
    node = static_node(cpus, policy, cpu_manager_options=options, kubelet_feature_gates=alpha_on)
    pinning = kubelet_pinning(node, guaranteed_pod(2))
    assert pinning.cpuset is None
    assert pinning.reason is not None and pinning.reason.check is ReasonCheck.KUBELET_ADMISSION
    assert pinning.reason.message.startswith("kubelet would not start: ")
    assert why in pinning.reason.message


# 2 sockets x 2 NUMA nodes x 4 CPUs: NUMA 0-1 on socket 0, NUMA 2-3 on socket 1
FOUR_NUMA = tuple((cpu, cpu, cpu // 8, cpu // 4) for cpu in range(16))


def four_numa_zones(distances: bool = True) -> tuple[Zone, ...]:
    def cost(a: int, b: int) -> int:
        return 10 if a == b else 11 if a // 2 == b // 2 else 21

    return tuple(
        Zone(
            numa,
            f"node-{numa}",
            {"cpu": ResourceAmounts(4000, 4000, 4000)},
            costs={b: cost(numa, b) for b in range(4)} if distances else {},
        )
        for numa in range(4)
    )


def closest_node(attributes: dict[str, str], zones: tuple[Zone, ...]) -> NodeSnapshot:
    held = PodAllocation("ns", "old", "u0", AllocationSource.KUBELET, cpuset=frozenset({0, 1, 2}))
    return static_node(FOUR_NUMA, nrt_attributes=attributes, zones=zones, allocations=(held,))


PREFER_CLOSEST = {"topologyManagerOptionPreferClosestNumaNodes": "true"}


def test_prefer_closest_numa_nodes_keeps_a_two_node_pod_on_one_socket() -> None:
    # NUMA 0 has 1 CPU left: of the pairs that hold 6, {1,2} has the lowest mask (across
    # the sockets) and {2,3} the shortest distance (one socket)
    plain = kubelet_pinning(closest_node({}, four_numa_zones()), guaranteed_pod(6))
    closest = kubelet_pinning(closest_node(PREFER_CLOSEST, four_numa_zones()), guaranteed_pod(6))
    assert plain.cpuset is not None and closest.cpuset is not None
    assert {cpu // 4 for cpu in plain.cpuset} == {1, 2}
    assert {cpu // 4 for cpu in closest.cpuset} == {2, 3}


def test_without_a_full_distance_table_the_option_cannot_apply() -> None:
    node = closest_node(PREFER_CLOSEST, four_numa_zones(distances=False))
    pinning = kubelet_pinning(node, guaranteed_pod(6))
    assert pinning.cpuset is not None and {cpu // 4 for cpu in pinning.cpuset} == {1, 2}


# --- init containers and sidecars ------------------------------------------------------------

TWO_NUMA_16 = tuple((cpu, cpu, cpu // 8, cpu // 8) for cpu in range(16))  # 0-7 and 8-15


def whole_cpus(name: str, cpus: int, restart_policy: str = "") -> ContainerSpec:
    amounts = {"cpu": cpus * 1000, "memory": GI}
    return ContainerSpec(name, amounts, amounts, restart_policy=restart_policy)


def pod_with(init: tuple[ContainerSpec, ...], apps: tuple[ContainerSpec, ...]) -> PodSpec:
    return PodSpec("ns", "p", uid="u", init_containers=init, containers=apps)


def node_holding(
    cpus: frozenset[int], policy: TopologyManagerPolicy, scope: TopologyManagerScope
) -> NodeSnapshot:
    held = PodAllocation("ns", "old", "u0", AllocationSource.KUBELET, cpuset=cpus)
    return replace(static_node(TWO_NUMA_16, policy, allocations=(held,)), tm_scope=scope)


def test_an_app_container_must_share_a_numa_node_with_the_init_cpus_it_reuses() -> None:
    # the init container's 2 CPUs land on NUMA 0 (4 free there); the app's 8 CPUs would
    # fit NUMA 1 alone, but every hint must hold NUMA 0, where its reusable CPUs are
    node = node_holding(frozenset(range(4)), TopologyManagerPolicy.RESTRICTED,
                        TopologyManagerScope.CONTAINER)  # fmt: skip
    spec = pod_with((whole_cpus("init", 2),), (whole_cpus("app", 8),))
    pinning = kubelet_pinning(node, spec)
    assert pinning.cpuset is None
    assert pinning.reason is not None and "TopologyAffinityError" in pinning.reason.message
    alone = kubelet_pinning(node, pod_with((), (whole_cpus("app", 8),)))
    assert alone.cpuset == frozenset(range(8, 16))


def test_under_the_pod_scope_the_largest_init_container_sizes_the_pod_hint() -> None:
    # 8 CPUs in one NUMA node are needed for the init container; neither has 8 free
    node = node_holding(frozenset({0, 1, 2, 3, 8, 9}), TopologyManagerPolicy.SINGLE_NUMA_NODE,
                        TopologyManagerScope.POD)  # fmt: skip
    spec = pod_with((whole_cpus("init", 8),), (whole_cpus("app", 2),))
    pinning = kubelet_pinning(node, spec)
    assert pinning.cpuset is None and pinning.reason is not None


def test_an_app_container_may_take_the_cpus_of_a_finished_init_container() -> None:
    node = node_holding(frozenset(range(4)), TopologyManagerPolicy.SINGLE_NUMA_NODE,
                        TopologyManagerScope.POD)  # fmt: skip
    spec = pod_with((whole_cpus("init", 8),), (whole_cpus("app", 2),))
    pinning = kubelet_pinning(node, spec)
    assert pinning.cpuset is not None and len(pinning.cpuset) == 2
    assert pinning.cpuset <= frozenset(range(8, 16))


def test_a_sidecar_keeps_its_cpus_beside_the_app_containers() -> None:
    node = node_holding(frozenset(), TopologyManagerPolicy.BEST_EFFORT,
                        TopologyManagerScope.CONTAINER)  # fmt: skip
    sidecar = whole_cpus("proxy", 2, restart_policy="Always")
    pinning = kubelet_pinning(node, pod_with((sidecar,), (whole_cpus("app", 4),)))
    assert pinning.cpuset is not None and len(pinning.cpuset) == 6
    plain_init = kubelet_pinning(node, pod_with((whole_cpus("init", 2),), (whole_cpus("app", 4),)))
    assert plain_init.cpuset is not None and len(plain_init.cpuset) == 4


@pytest.mark.parametrize(
    ("init", "apps", "want"),
    [
        pytest.param((), (2, 3), 5, id="apps-only"),
        pytest.param((8,), (2,), 8, id="largest-init"),
        pytest.param((("sidecar", 2), 3), (4,), 6, id="sidecar-counts-with-apps"),
        pytest.param((("sidecar", 2), 5), (1,), 7, id="init-after-a-running-sidecar"),
    ],
)
def test_pod_guaranteed_cpus_follows_the_sidecar_rules(init, apps, want) -> None:
    def spec(entry: int | tuple[str, int], index: int) -> ContainerSpec:
        if isinstance(entry, tuple):
            return whole_cpus(f"s{index}", entry[1], restart_policy="Always")
        return whole_cpus(f"i{index}", entry)

    inits = tuple(spec(entry, i) for i, entry in enumerate(init))
    pod = pod_with(inits, tuple(whole_cpus(f"a{i}", n) for i, n in enumerate(apps)))
    assert pod_guaranteed_cpus(pod) == want
