"""scheduler-plugins NodeResourceTopologyMatch: upstream tables and worked examples."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from scheduler_api.engine.model.results import PlacementResult, ReasonCheck
from scheduler_api.engine.model.snapshot import (
    ContainerSpec,
    Flavour,
    NodeSnapshot,
    PodSpec,
    QoSClass,
    ResourceAmounts,
    Zone,
)
from scheduler_api.engine.schedulerplugins.fast.vector import NRTIndex, judge_all
from scheduler_api.engine.schedulerplugins.reference import common as nrt_common
from scheduler_api.engine.schedulerplugins.reference import match as nrt_match
from scheduler_api.engine.schedulerplugins.reference import scoring as nrt_scoring
from scheduler_api.engine.schedulerplugins.reference.match import NRTMatchConfig, ScoringStrategy
from tests.engine import data_nrt_filter as f
from tests.engine import data_nrt_score as s
from tests.engine.data_nrt_builders import (
    amount,
    amounts,
    container,
    guaranteed,
    nrt_node,
    nrt_zone,
    pod,
)


def verdict_message(result: PlacementResult) -> str | None:
    if result.fits:
        return None
    messages = {r.message for r in result.reasons}
    assert len(messages) == 1, result.reasons
    return messages.pop()


@pytest.mark.parametrize(("pod_spec", "node_name", "want"), f.TOPOLOGY_CASES)
def test_filter_matches_upstream_topology_table(
    pod_spec: PodSpec, node_name: str, want: str | None
) -> None:
    assert verdict_message(nrt_match.filter_node(f.NODES[node_name], pod_spec)) == want


@pytest.mark.parametrize(("pod_spec", "want"), f.MULTI_POD_SCOPE_CASES)
def test_filter_pod_scope_sums_all_containers(pod_spec: PodSpec, want: str | None) -> None:
    assert verdict_message(nrt_match.filter_node(f.HOST0_POD_SCOPE, pod_spec)) == want


@pytest.mark.parametrize(("pod_spec", "want"), f.MULTI_CONTAINER_SCOPE_CASES)
def test_filter_container_scope_places_containers_one_by_one(
    pod_spec: PodSpec, want: str | None
) -> None:
    assert verdict_message(nrt_match.filter_node(f.HOST0_CONTAINER_SCOPE, pod_spec)) == want


def test_a_refusal_names_every_zone_and_its_shortfall() -> None:
    result = nrt_match.filter_node(f.NODES["node3"], guaranteed({f.NIC: "20"}))
    assert [(r.numa_id, r.resource, r.short_by) for r in result.reasons] == [
        (0, f.NIC, 15),
        (1, f.NIC, 18),
    ]
    assert str(result.reasons[0]) == "vendor/nic1 short by 15 on zone 0; single-numa-node"


def test_a_cpu_shortfall_reads_in_cores() -> None:
    result = nrt_match.filter_node(f.NODES["node1"], guaranteed({"cpu": "10", "memory": "1Gi"}))
    assert [str(r) for r in result.reasons] == [
        "cpu short by 6 CPUs on zone 0 for container cnt-1; single-numa-node",
        "cpu short by 2 CPUs on zone 1 for container cnt-1; single-numa-node",
    ]


def test_a_resource_missing_from_the_node_is_refused_before_numa_checks() -> None:
    result = nrt_match.filter_node(f.NODES["node1"], guaranteed({"vendor/fpga": "1"}))
    assert result.reasons[0].check is ReasonCheck.MISSING_ON_NODE
    assert result.reasons[0].resource == "vendor/fpga"


def test_container_scope_debits_the_zone_chosen_for_earlier_containers() -> None:
    # two 20-cpu containers: the first takes zone 0 (lowest id), the second needs zone 1
    spec = f.entry([], [{"cpu": "20", "memory": "40G"}, {"cpu": "20", "memory": "40G"}])
    result = nrt_match.filter_node(f.HOST0_CONTAINER_SCOPE, spec)
    assert result.fits and result.numa_zones == (0, 1)


def test_pod_scope_reports_the_lowest_fitting_zone() -> None:
    result = nrt_match.filter_node(f.NODES["node3"], guaranteed({"cpu": "3", "memory": "1Gi"}))
    assert result.numa_zones == (1,)


@pytest.mark.parametrize(
    ("policies", "flavour", "note"),
    [
        pytest.param(["BestEffortPodLevel"], Flavour.UPSTREAM_V1ALPHA2, "policy best-effort",
                     id="best-effort-node-never-filters"),
        pytest.param(["SingleNUMANodePodLevel"], Flavour.CRANE, "no NodeResourceTopology",
                     id="crane-nrt-is-invisible"),
        pytest.param(["SingleNUMANodePodLevel"], None, "no NodeResourceTopology",
                     id="node-without-nrt-passes"),
    ],
)  # fmt: skip
def test_filter_passes_what_it_cannot_judge(
    policies: list[str], flavour: Flavour | None, note: str
) -> None:
    node = nrt_node("n", f.HOST0_ZONES, policies=policies, flavour=flavour)
    result = nrt_match.filter_node(node, guaranteed({"cpu": "100", "memory": "1Gi"}))
    assert result.fits and note in result.notes[0]


def test_koordinator_nrt_is_read_through_v1alpha2() -> None:
    node = nrt_node("n", f.HOST0_ZONES, policies=["SingleNUMANodePodLevel"],
                    flavour=Flavour.KOORDINATOR)  # fmt: skip
    assert not nrt_match.filter_node(node, guaranteed({"cpu": "100", "memory": "1Gi"})).fits


@pytest.mark.parametrize(("policies", "attributes", "policy", "scope"), s.TM_CONFIG_CASES)
def test_topology_manager_config_resolution(
    policies: list[str], attributes: dict[str, str], policy: str, scope: str
) -> None:
    conf = nrt_match.resolve_topology_manager(policies, attributes)
    assert (conf.policy, conf.scope) == (policy, scope)


@pytest.mark.parametrize(("attributes", "want"), s.MAX_NUMA_CASES)
def test_max_numa_nodes_attribute(attributes: dict[str, str], want: int) -> None:
    assert nrt_match.resolve_topology_manager([], attributes).max_numa_nodes == want


@pytest.mark.parametrize(("app", "init", "want"), s.EFFECTIVE_REQUEST_CASES)
def test_effective_request(
    app: list[tuple[int, int]], init: list[tuple[int, int]], want: tuple[int, int]
) -> None:
    def spec(cpu_mem: tuple[int, int]) -> ContainerSpec:
        return ContainerSpec("c", requests={"cpu": cpu_mem[0], "memory": cpu_mem[1]})

    p = PodSpec("ns", "p", containers=tuple(map(spec, app)), init_containers=tuple(map(spec, init)))
    assert nrt_common.effective_request(p) == {"cpu": want[0], "memory": want[1]}


def test_effective_request_ignores_overhead() -> None:
    p = guaranteed({"cpu": "1", "memory": "1Gi"})
    with_overhead = PodSpec(p.namespace, p.name, containers=p.containers, overhead={"cpu": 250})
    assert nrt_common.effective_request(with_overhead)["cpu"] == 1000


SCORE_POD = pod(container("c", {"cpu": "2", "memory": str(20 * 1024 * 1024)}))


@pytest.mark.parametrize(("strategy", "want"), s.STRATEGY_CASES)
def test_score_strategies(strategy: ScoringStrategy, want: dict[str, int]) -> None:
    nodes = s.default_numa_nodes("SingleNUMANodeContainerLevel")
    conf = NRTMatchConfig(scoring_strategy=strategy)
    got = {
        name: nrt_match.evaluate(node, SCORE_POD, config=conf).score for name, node in nodes.items()
    }
    assert got == want


@pytest.mark.parametrize(("requests", "policy", "want"), s.LEAST_NUMA_CASES)
def test_least_numa_nodes_score(
    requests: list[dict[str, str]], policy: str, want: dict[str, int]
) -> None:
    nodes = s.four_numa_nodes() if policy == "four" else s.default_numa_nodes(policy)
    spec = pod(*(container(f"c{i}", r) for i, r in enumerate(requests)))
    conf = NRTMatchConfig(scoring_strategy=ScoringStrategy.LEAST_NUMA_NODES)
    got = {name: nrt_match.score_node(node, spec, conf).score for name, node in nodes.items()}
    assert got == want


@pytest.mark.parametrize(("nodes", "requests", "want", "is_min"), s.REQUIRED_CASES)
def test_numa_nodes_required(
    nodes: list[nrt_common.NUMANode],
    requests: dict[str, str],
    want: tuple[int, ...] | None,
    is_min: bool,
) -> None:
    found = nrt_scoring.numa_nodes_required(nodes, amounts(requests), QoSClass.GUARANTEED)
    assert (found[0], found[1]) == (want, is_min) if found else want is None


@pytest.mark.parametrize(("count", "optimal", "want"), s.NORMALIZE_CASES)
def test_least_numa_normalize_score(count: int, optimal: bool, want: int) -> None:
    assert nrt_scoring.least_numa_score(count, optimal) == want


@pytest.mark.parametrize(("combos", "nodes", "want"), s.MIN_DISTANCE_CASES)
def test_min_average_distance(
    combos: list[tuple[int, ...]], nodes: list[nrt_common.NUMANode], want: float
) -> None:
    assert nrt_scoring.min_avg_distance(nodes, combos) == pytest.approx(want, rel=1e-6)


def test_formats_worked_example_least_numa_94_76_82() -> None:
    """formats.md §7: 1 NUMA scores 94, 2 NUMA 76 or 82 with the minimal distance."""
    assert nrt_scoring.least_numa_score(1, True) == 94
    assert nrt_scoring.least_numa_score(2, False) == 76
    assert nrt_scoring.least_numa_score(2, True) == 82


def test_least_numa_step_ignores_max_numa_nodes_attribute() -> None:
    node = nrt_node("n", f.HOST0_ZONES, policies=["BestEffortPodLevel"],
                    attributes={"topologyManagerMaxNUMANodes": "4"})  # fmt: skip
    conf = NRTMatchConfig(scoring_strategy=ScoringStrategy.LEAST_NUMA_NODES)
    # with a step of 100/4 it would be 87; upstream always divides by 8: 100 - 12 + 6
    assert nrt_match.score_node(node, guaranteed({"cpu": "2", "memory": "1Gi"}), conf).score == 94


def test_non_guaranteed_pods_score_100_everywhere() -> None:
    burstable = pod(container("c", {"cpu": "1"}, {"cpu": "2"}))
    node = s.default_numa_nodes("SingleNUMANodePodLevel")["Node1"]
    assert nrt_match.evaluate(node, burstable).score == 100


def test_policy_other_than_single_numa_node_scores_zero() -> None:
    node = s.default_numa_nodes("RestrictedPodLevel")["Node1"]
    assert nrt_match.evaluate(node, SCORE_POD).score == 0


def test_balanced_allocation_with_one_resource_is_undefined() -> None:
    """gonum's sample variance of one value is NaN and int64(NaN) is the min int64.

    Unreachable through Score: a Guaranteed pod always requests both cpu and memory.
    """
    conf = NRTMatchConfig(scoring_strategy=ScoringStrategy.BALANCED_ALLOCATION)
    one = nrt_scoring.balanced_allocation({"cpu": 2000}, {"cpu": 4000}, conf)
    assert one == nrt_scoring.GO_MIN_INT64
    nodes = [nrt_common.NUMANode(0, {"cpu": 4000}, {})]
    assert (
        nrt_scoring.score_numa_nodes({"cpu": 2000}, nodes, nrt_scoring.balanced_allocation, conf)
        < 0
    )


def test_score_takes_the_first_then_smallest_non_zero_numa_score() -> None:
    nodes = [nrt_common.NUMANode(0, {"cpu": 1000}, {}), nrt_common.NUMANode(1, {"cpu": 8000}, {})]
    conf = NRTMatchConfig(scoring_strategy=ScoringStrategy.MOST_ALLOCATED)
    # zone 0 cannot fit (score 0) -> replaced by zone 1's 25
    assert (
        nrt_scoring.score_numa_nodes({"cpu": 2000}, nodes, nrt_scoring.most_allocated, conf) == 25
    )


def test_quantity_value_rounds_millicores_up() -> None:
    conf = NRTMatchConfig()
    # 500m counts as 1 core, 2500m of capacity as 3: (3 - 1) * 100 / 3 = 66
    assert nrt_scoring.least_allocated({"cpu": 500}, {"cpu": 2500}, conf) == 66


# --- real sample -------------------------------------------------------------------------


def node_from_sample(items: list[dict[str, Any]]) -> NodeSnapshot:
    """Minimal parse of node-upstream-v1alpha2.json (the real parsers live in topology/)."""
    node = next(i for i in items if i["kind"] == "Node")
    nrt = next(i for i in items if i["kind"] == "NodeResourceTopology")
    zones = tuple(
        Zone(
            int(z["name"].removeprefix("node-")),
            z["name"],
            {
                r["name"]: ResourceAmounts(*(amount(r["name"], r[k]) for k in
                                             ("capacity", "allocatable", "available")))
                for r in z["resources"]
            },
            {int(c["name"].removeprefix("node-")): c["value"] for c in z.get("costs", [])},
        )
        for z in nrt["zones"]
    )  # fmt: skip
    return NodeSnapshot(
        name=node["metadata"]["name"],
        flavour=Flavour.UPSTREAM_V1ALPHA2,
        allocatable=amounts(node["status"]["allocatable"]),
        topology_policies=tuple(nrt.get("topologyPolicies", ())),
        nrt_attributes={a["name"]: a["value"] for a in nrt.get("attributes", ())},
        zones=zones,
    )


@pytest.fixture
def worker_01(load_sample: Any) -> NodeSnapshot:
    return node_from_sample(load_sample("node-upstream-v1alpha2.json")["items"])


def test_sample_node_places_a_6_core_pod_on_numa_1(worker_01: NodeSnapshot) -> None:
    result = nrt_match.evaluate(worker_01, guaranteed({"cpu": "6", "memory": "24Gi"}))
    assert result.fits and result.numa_zones == (1,)
    # the node score is the smallest non-zero zone score, even for a zone that cannot fit:
    # zone 0: cpu 0 (2 < 6), memory 49 -> 24; zone 1: cpu 89, memory 90 -> 89
    assert result.score == 24


def test_sample_node_refuses_a_pod_bigger_than_any_zone(worker_01: NodeSnapshot) -> None:
    result = nrt_match.evaluate(worker_01, guaranteed({"cpu": "60", "memory": "1Gi"}))
    assert not result.fits
    assert {(r.numa_id, r.short_by) for r in result.reasons} == {(0, 58_000), (1, 4_000)}


@pytest.mark.parametrize(
    "strategy",
    [
        ScoringStrategy.LEAST_ALLOCATED,
        ScoringStrategy.MOST_ALLOCATED,
        ScoringStrategy.BALANCED_ALLOCATION,
    ],
)
@pytest.mark.parametrize("numa_ids", [(1,), (0, 2)], ids=["only-node-1", "node-0-and-node-2"])
def test_a_numa_id_not_below_the_zone_count_makes_upstream_score_panic(strategy, numa_ids):
    zones = [nrt_zone(i, {"cpu": ("8", "8"), "memory": ("8Gi", "8Gi")}) for i in numa_ids]
    attributes = {"topologyManagerPolicy": "single-numa-node", "topologyManagerScope": "pod"}
    node = nrt_node("gappy", zones, attributes=attributes)
    result = nrt_match.evaluate(
        node, guaranteed({"cpu": "2", "memory": "1Gi"}), config=NRTMatchConfig(strategy)
    )
    assert result.fits and result.score is None  # Filter passes; Score takes the scheduler down
    (reason,) = result.reasons
    assert reason.check is ReasonCheck.SCHEDULER_ERROR and "would panic" in reason.message
    columns = judge_all(
        NRTIndex([node]), guaranteed({"cpu": "2", "memory": "1Gi"}), np.ones(1, np.bool_),
        NRTMatchConfig(strategy), {"cpu": 2000, "memory": 2**30},
    )  # fmt: skip
    assert columns.exact.tolist() == [True]  # the columns leave it to the reference
