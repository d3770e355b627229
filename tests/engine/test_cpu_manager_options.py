"""The static CPU manager's options as the kubelet ships them (kubernetes v1.35).

Tables ported from kubernetes ``pkg/kubelet/cm/cpumanager/policy_options_test.go``
(availability, ValidateStaticPolicyOptions, option compatibility) and
``cpu_assignment_test.go`` (TestTakeByTopologyNUMAPacked's PreferAlignByUncoreCache
rows, with the uncore fixtures of ``policy_test.go``). Availability follows the v1.35
maturity: full-pcpus-only and strict-cpu-reservation stable, distribute-cpus-across-numa
and prefer-align-cpus-by-uncorecache beta, align-by-socket and
distribute-cpus-across-cores alpha.
"""

from __future__ import annotations

import pytest

from scheduler_api.engine import kubelet_rules
from scheduler_api.engine.kubelet.reference.admission import (
    kubelet_pinning,
)
from scheduler_api.engine.kubelet.reference.cpu_topology import CPUTopology
from scheduler_api.engine.kubelet.reference.cpumanager import (
    StaticPolicyOptions,
    parse_static_policy_options,
    take_cpus,
    validate_static_policy_options,
)
from scheduler_api.engine.kubelet.reference.node_config import (
    kubelet_cpu_pools,
)
from scheduler_api.engine.model.snapshot import (
    AllocationSource,
    ContainerSpec,
    NodeSnapshot,
    PodAllocation,
    PodSpec,
    TopologyManagerPolicy,
    TopologyManagerScope,
)
from tests.engine.data_cpu_topologies import (
    FAKE_TOPO_MULTI_SOCKET_DUAL_SOCKET_PER_NUMA_HT,
    TOPO_DUAL_SOCKET_HT,
    TOPO_DUAL_SOCKET_MULTI_NUMA_PER_SOCKET_HT,
    parse_cpuset,
)

ALPHA, BETA = "CPUManagerPolicyAlphaOptions", "CPUManagerPolicyBetaOptions"

# --- policy_test.go's uncore machines: (cpu, core, socket, numa) rows + cpu -> uncore ---

UNCORE_SINGLE_SOCKET_NO_SMT = tuple((c, c, 0, 0) for c in range(16))
UNCORE_DUAL_SOCKET_NO_SMT = tuple((c, c, c // 8, c // 8) for c in range(16))
UNCORE_SINGLE_SOCKET_MULTI_NUMA = tuple((c, c, 0, c // 8) for c in range(16))
UNCORE_SINGLE_SOCKET_SMT = tuple((c, c % 8, 0, 0) for c in range(16))
BY_FOUR = {c: c // 4 for c in range(16)}  # 4 uncore caches of 4 CPUs
SMT_UNCORE = {c: (c % 8) // 4 for c in range(16)}  # 2 caches of 4 cores (8 threads)
ONE_CACHE = {c: 0 for c in range(12)}  # kubelet's fixture leaves UncoreCacheID at 0

# (description, rows, uncore table, available, count, expected)
UNCORE_CASES = [
    (
        "take cpus from two full UncoreCaches and partial from a single UncoreCache",
        UNCORE_SINGLE_SOCKET_NO_SMT,
        BY_FOUR,
        "1-15",
        10,
        "1-2,4-11",
    ),
    (
        "take one cpu from dual socket with HT - core from Socket 0",
        TOPO_DUAL_SOCKET_HT,
        ONE_CACHE,
        "1-5,7-11",
        1,
        "1",
    ),
    (
        "take first available UncoreCache from first socket",
        UNCORE_DUAL_SOCKET_NO_SMT,
        BY_FOUR,
        "0-15",
        4,
        "0-3",
    ),
    (
        "take all available UncoreCache from first socket",
        UNCORE_DUAL_SOCKET_NO_SMT,
        BY_FOUR,
        "2-15",
        6,
        "2-7",
    ),
    (
        "take first available UncoreCache from second socket",
        UNCORE_DUAL_SOCKET_NO_SMT,
        BY_FOUR,
        "8-15",
        4,
        "8-11",
    ),
    (
        "take first available UncoreCache from available NUMA",
        UNCORE_SINGLE_SOCKET_MULTI_NUMA,
        BY_FOUR,
        "3,4-8,12",
        2,
        "4-5",
    ),
    (
        "take cpus from best available UncoreCache group of multi uncore cache single socket "
        "- SMT enabled",
        UNCORE_SINGLE_SOCKET_SMT,
        SMT_UNCORE,
        "2-3,10-11,4-7,12-15",
        6,
        "4-6,12-14",
    ),
    (
        "take cpus from multiple UncoreCache of single socket - SMT enabled",
        UNCORE_SINGLE_SOCKET_SMT,
        SMT_UNCORE,
        "1-7,9-15",
        10,
        "4-7,12-15,1,9",
    ),
]

UNCORE = StaticPolicyOptions(prefer_align_by_uncore_cache=True)


@pytest.mark.parametrize(
    ("rows", "uncore", "available", "count", "expected"),
    [pytest.param(*case[1:], id=case[0]) for case in UNCORE_CASES],
)
def test_prefer_align_by_uncore_cache_takes_what_kubelet_takes(
    rows, uncore, available, count, expected
) -> None:
    topology = CPUTopology.from_cpus(rows, uncore)
    taken = take_cpus(topology, parse_cpuset(available), count, options=UNCORE)
    assert taken == parse_cpuset(expected)


def test_an_odd_request_on_smt_rounds_up_to_whole_cores_and_leaves_out_the_highest_thread() -> None:
    topology = CPUTopology.from_cpus(UNCORE_SINGLE_SOCKET_SMT, SMT_UNCORE)
    # cache 0 (fewest free, so first) has cores 2 and 3 free: 2, 3, 10, 11 less the highest
    assert take_cpus(topology, parse_cpuset("2-7,10-15"), 3, options=UNCORE) == {2, 3, 10}


def test_without_an_uncore_table_each_socket_is_one_uncore_cache() -> None:
    topology = CPUTopology.from_cpus(UNCORE_DUAL_SOCKET_NO_SMT)
    assert not topology.uncore_known
    assert topology.num_uncore_caches == 2
    assert topology.cpus_in_uncore(1) == frozenset(range(8, 16))


def test_the_uncore_option_changes_the_pick_only_where_caches_split_a_socket() -> None:
    known = CPUTopology.from_cpus(UNCORE_SINGLE_SOCKET_NO_SMT, BY_FOUR)
    unknown = CPUTopology.from_cpus(UNCORE_SINGLE_SOCKET_NO_SMT)
    available = parse_cpuset("1-2,5-7,9-15")
    # packed takes the fullest-first single CPUs; uncore alignment keeps 3 in cache 1
    assert take_cpus(known, available, 3, options=UNCORE) == {5, 6, 7}
    assert take_cpus(unknown, available, 3, options=UNCORE) == take_cpus(unknown, available, 3)


@pytest.mark.parametrize(
    ("uncore", "message"),
    [
        pytest.param({0: 0}, "must name every CPU", id="missing-cpus"),
        pytest.param({**BY_FOUR, 99: 1}, "must name every CPU", id="unknown-cpu"),
        pytest.param({**BY_FOUR, 3: -1}, "non-negative", id="negative-id"),
        pytest.param({**BY_FOUR, 3: "a"}, "ints", id="not-an-int"),
    ],
)
def test_a_bad_uncore_table_is_refused_with_a_clear_error(uncore, message) -> None:
    with pytest.raises(ValueError, match=message):
        CPUTopology.from_cpus(UNCORE_SINGLE_SOCKET_NO_SMT, uncore)


# --- CheckPolicyOptionAvailable / NewStaticPolicyOptions --------------------------------

# (option, gates, available)
AVAILABILITY = [
    ("this-option-does-not-exist", {BETA: False}, False),
    ("this-option-does-not-exist", {BETA: True}, False),
    ("full-pcpus-only", {}, True),
    ("full-pcpus-only", {BETA: False}, True),  # stable at v1.35
    ("strict-cpu-reservation", {BETA: False}, True),  # stable at v1.35 (KEP-4540)
    ("align-by-socket", {ALPHA: True}, True),
    ("align-by-socket", {BETA: True}, False),
    ("distribute-cpus-across-numa", {}, True),
    ("distribute-cpus-across-numa", {BETA: False}, False),
    ("distribute-cpus-across-cores", {ALPHA: True}, True),
    ("distribute-cpus-across-cores", {BETA: True}, False),
    ("prefer-align-cpus-by-uncorecache", {}, True),
    ("prefer-align-cpus-by-uncorecache", {BETA: False}, False),
]


@pytest.mark.parametrize(
    ("option", "gates", "available"),
    [pytest.param(*case, id=f"{case[0]}-{case[1]}") for case in AVAILABILITY],
)
def test_an_option_is_available_at_its_maturity(option, gates, available) -> None:
    try:
        parse_static_policy_options({option: "true"}, gates)
    except ValueError as error:
        assert not available, str(error)
    else:
        assert available


# (description, options, gates, error or None)
COMPATIBILITY = [
    ("FullPhysicalCPUsOnly set to true only", {"full-pcpus-only": "true"}, {}, None),
    (
        "DistributeCPUsAcrossCores set to true only",
        {"distribute-cpus-across-cores": "true"},
        {ALPHA: True},
        None,
    ),
    (
        "FullPhysicalCPUsOnly and DistributeCPUsAcrossCores options can not coexist",
        {"full-pcpus-only": "true", "distribute-cpus-across-cores": "true"},
        {ALPHA: True},
        "can not be used at the same time",
    ),
    (
        "uncore alignment and DistributeCPUsAcrossCores can not coexist",
        {"prefer-align-cpus-by-uncorecache": "true", "distribute-cpus-across-cores": "true"},
        {ALPHA: True},
        "prefer-align-cpus-by-uncorecache and distribute-cpus-across-cores",
    ),
    (
        "uncore alignment and DistributeCPUsAcrossNUMA can not coexist",
        {"prefer-align-cpus-by-uncorecache": "true", "distribute-cpus-across-numa": "true"},
        {},
        "prefer-align-cpus-by-uncorecache and distribute-cpus-across-numa",
    ),
    ("an option set to false is accepted", {"full-pcpus-only": "false"}, {}, None),
    ("Go's ParseBool spellings", {"full-pcpus-only": "T"}, {}, None),
    ("a value ParseBool refuses", {"full-pcpus-only": "yes"}, {}, "bad value for option"),
    ("an unknown option", {"full-pcpu-only": "true"}, {}, "unknown CPU Manager Policy option"),
    (
        "an alpha option without its gate",
        {"align-by-socket": "true"},
        {},
        "Alpha-level Options not enabled",
    ),
]


@pytest.mark.parametrize(
    ("options", "gates", "error"), [pytest.param(*case[1:], id=case[0]) for case in COMPATIBILITY]
)
def test_new_static_policy_options_refuses_what_the_kubelet_refuses(options, gates, error) -> None:
    if error is None:
        parse_static_policy_options(options, gates)
    else:
        with pytest.raises(ValueError, match=error):
            parse_static_policy_options(options, gates)


def _rows(rows: tuple[tuple[int, int, int, int], ...]) -> CPUTopology:
    return CPUTopology.from_cpus(rows)


# ValidateStaticPolicyOptions: (description, options, machine, single-numa-node, error?)
VALIDATE = [
    ("Align by socket not enabled", {"full-pcpus-only": "true"}, "multi", True, False),
    (
        "Align by socket enabled with topology manager single numa node",
        {"align-by-socket": "true"},
        "multi",
        True,
        True,
    ),
    (
        "Align by socket enabled with num_sockets > num_numa",
        {"align-by-socket": "true"},
        "fake",
        False,
        True,
    ),
    (
        "Align by socket enabled: with topology manager None policy",
        {"align-by-socket": "true"},
        "multi",
        False,
        False,
    ),
]
MACHINES = {
    "multi": TOPO_DUAL_SOCKET_MULTI_NUMA_PER_SOCKET_HT,
    "fake": FAKE_TOPO_MULTI_SOCKET_DUAL_SOCKET_PER_NUMA_HT,
}


@pytest.mark.parametrize(
    ("options", "machine", "single_numa", "refused"),
    [pytest.param(*case[1:], id=case[0]) for case in VALIDATE],
)
def test_validate_static_policy_options(options, machine, single_numa, refused) -> None:
    parsed = parse_static_policy_options(options, {ALPHA: True})
    topology = _rows(MACHINES[machine])
    if refused:
        with pytest.raises(ValueError):
            validate_static_policy_options(parsed, topology, single_numa)
    else:
        validate_static_policy_options(parsed, topology, single_numa)


# --- on a node: admission, pools and the rules that judged it ------------------------

GI = 2**30
SMT8 = tuple((cpu, cpu % 4, 0, 0) for cpu in range(8))  # core k holds k and k+4


def _node(options: dict[str, str], **fields: object) -> NodeSnapshot:
    return NodeSnapshot(
        "n",
        cpus=fields.pop("cpus", SMT8),  # type: ignore[arg-type]
        cpu_manager_policy="static",
        cpu_manager_options=options,
        tm_policy=TopologyManagerPolicy.BEST_EFFORT,
        tm_scope=TopologyManagerScope.CONTAINER,
        **fields,  # type: ignore[arg-type]
    )


def _pod(cpus: int) -> PodSpec:
    amounts = {"cpu": cpus * 1000, "memory": GI}
    return PodSpec("ns", "p", containers=(ContainerSpec("app", amounts, amounts),))


def test_an_alpha_option_without_its_gate_means_the_kubelet_does_not_start() -> None:
    gates = {"CPUManagerPolicyAlphaOptions": False}
    pinning = kubelet_pinning(
        _node({"align-by-socket": "true"}, kubelet_feature_gates=gates), _pod(2)
    )
    assert pinning.cpuset is None and pinning.reason is not None
    assert "Alpha-level Options not enabled" in pinning.reason.message


def test_an_unknown_option_means_the_kubelet_does_not_start() -> None:
    pinning = kubelet_pinning(_node({"pack-tightly": "true"}), _pod(2))
    assert pinning.reason is not None
    assert 'unknown CPU Manager Policy option: "pack-tightly"' in pinning.reason.message


def test_strict_cpu_reservation_takes_the_reserved_cpus_out_of_the_shared_pool_only() -> None:
    held = PodAllocation("ns", "old", "u", AllocationSource.KUBELET, cpuset=frozenset({1, 5}))
    fields = {"kubelet_reserved_cpus": frozenset({0, 4}), "allocations": (held,)}
    strict = kubelet_cpu_pools(_node({"strict-cpu-reservation": "true"}, **fields))
    loose = kubelet_cpu_pools(_node({}, **fields))
    assert strict is not None and loose is not None
    assert loose.shared == {0, 2, 3, 4, 6, 7} and strict.shared == {2, 3, 6, 7}
    assert strict.available == loose.available == {2, 3, 6, 7}
    # exclusive admission is the same either way
    pod = _pod(2)
    assert (
        kubelet_pinning(_node({"strict-cpu-reservation": "true"}, **fields), pod).cpuset
        == kubelet_pinning(_node({}, **fields), pod).cpuset
    )


def test_the_uncore_option_picks_inside_the_published_caches() -> None:
    node = _node(
        {"prefer-align-cpus-by-uncorecache": "true"},
        cpus=UNCORE_SINGLE_SOCKET_NO_SMT,
        uncore_caches=BY_FOUR,
        allocations=(
            PodAllocation("ns", "o", "u", AllocationSource.KUBELET, cpuset=parse_cpuset("0,3-4,8")),
        ),
    )
    assert kubelet_pinning(node, _pod(3)).cpuset == {5, 6, 7}


def test_kubelet_rules_name_the_options_and_say_what_is_assumed() -> None:
    node = _node(
        {"prefer-align-cpus-by-uncorecache": "true", "strict-cpu-reservation": "true"},
        kubelet_reserved_cpus=frozenset({0}),
    )
    cpu_rule, tm_rule, memory_rule = kubelet_rules(node)
    assert memory_rule.startswith("memory-manager: memory and hugepages alignment not checked")
    assert cpu_rule.startswith("cpu-manager static: strict-cpu-reservation (reserved CPUs 0")
    assert "uncore caches unknown: one per socket assumed" in cpu_rule
    assert tm_rule == "topology-manager best-effort/container: max-allowable-numa-nodes=8"
    gates_off = {"CPUManagerPolicyAlphaOptions": False}
    refused = kubelet_rules(_node({"align-by-socket": "true"}, kubelet_feature_gates=gates_off))
    assert refused[0].startswith("cpu-manager static: the kubelet would not start: ")
    assert kubelet_rules(NodeSnapshot("bare"))[0] == "cpu-manager: policy not published"


def test_a_kubelet_seen_running_with_an_alpha_option_had_its_gate_on() -> None:
    """koordlet reports the options of the kubelet that runs: with no gates published,
    an alpha option it reports says its gate is on, so the kubelet is not refused."""
    node = _node({"distribute-cpus-across-cores": "true"})
    assert kubelet_rules(node)[0] == "cpu-manager static: distribute-cpus-across-cores"
    assert kubelet_pinning(node, _pod(2)).reason is None
    published_off = _node(
        {"distribute-cpus-across-cores": "true"},
        kubelet_feature_gates={"CPUManagerPolicyAlphaOptions": False},
    )
    reason = kubelet_pinning(published_off, _pod(2)).reason
    assert reason is not None and "Alpha-level Options not enabled" in reason.message
