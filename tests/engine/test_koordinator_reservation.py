"""Koordinator v1.8.0 reservation and NUMA-allocate-strategy rules, with cases ported from
upstream's tables (apis/extension/reservation_test.go TestExactMatchReservation,
pkg/util/reservation/reservation_test.go TestGetReservationRestrictedResources,
frameworkext/reservation_info_test.go TestIsMatchable, plugins/reservation
nominator_test.go TestNominateReservation and scoring_test.go TestScoreWithOrder)."""

from __future__ import annotations

import json
from dataclasses import dataclass, field, replace

import pytest

from scheduler_api.engine.koordinator.reference import plugin as koordinator
from scheduler_api.engine.koordinator.reference.reservation import (
    book_owner,
    exact_match,
    exact_match_spec,
    go_parse_int64,
    is_matchable,
    nominate,
    remained_of,
    reservation_terms,
    restricted_resources,
    split_reservations,
)
from scheduler_api.engine.koordinator.reference.state import KoordConfig, numa_allocate_strategy
from scheduler_api.engine.model.snapshot import (
    AllocationSource,
    ClusterSnapshot,
    LabelSelector,
    NodeSnapshot,
    ObjectRef,
    PodAllocation,
    ReservationAllocatePolicy,
    ReservationOwner,
    ReservationPhase,
    ReservationSnapshot,
)
from scheduler_api.engine.whatif.evaluate import place
from tests.engine.test_koordinator import GI, koord_node, lsr_pod

AFFINITY = "scheduling.koordinator.sh/reservation-affinity"
ALLOCATED = "scheduling.koordinator.sh/reservation-allocated"
EXACT = "scheduling.koordinator.sh/exact-match-reservation"
ORDER = "scheduling.koordinator.sh/reservation-order"
STRATEGY = "node.koordinator.sh/numa-allocate-strategy"
NUMA_SPEC = "scheduling.koordinator.sh/numa-topology-spec"


def resv(
    name: str,
    cpu: int = 2000,
    memory: int = 4 * GI,
    *,
    node: str = "n1",
    **extra: object,
) -> ReservationSnapshot:
    """An Available reservation of `cpu` and `memory` for pods app=web (no NUMA detail)."""
    fields: dict[str, object] = {
        "name": name,
        "uid": f"uid-{name}",
        "node_name": node,
        "phase": ReservationPhase.AVAILABLE,
        "owners": (ReservationOwner(label_selector=LabelSelector({"app": "web"})),),
        "allocatable": {"cpu": cpu, "memory": memory},
        **extra,
    }
    return ReservationSnapshot(**fields)  # type: ignore[arg-type]


def web(cpu: str = "2", memory: str = "4Gi", **annotations: str) -> object:
    return lsr_pod(cpu, memory, qos="LS", labels={"app": "web"}, annotations=annotations)


# --- ExactMatchReservation ------------------------------------------------------------------


@dataclass(frozen=True)
class ExactCase:
    name: str
    names: tuple[str, ...] | None
    requests: dict[str, int]
    allocatable: dict[str, int]
    want: bool


EXACT_CASES = [
    ExactCase("exact matched cpu", ("cpu",), {"cpu": 1000}, {"cpu": 1000}, True),
    ExactCase(
        "exact matched cpu, memory not listed",
        ("cpu",),
        {"cpu": 1000, "memory": GI},
        {"cpu": 1000, "memory": 2 * GI},
        True,
    ),
    ExactCase(
        "exact matched cpu, memory not exact matched",
        ("cpu", "memory"),
        {"cpu": 1000, "memory": GI},
        {"cpu": 1000, "memory": 2 * GI},
        False,
    ),
    ExactCase(
        "memory listed but on neither side does not matter",
        ("cpu", "memory"),
        {"cpu": 1000},
        {"cpu": 1000},
        True,
    ),
    ExactCase("no spec matches anything", None, {"cpu": 1000}, {"cpu": 4000}, True),
    ExactCase("a name only the pod asks for", ("gpu",), {"gpu": 1}, {"cpu": 1000}, False),
    ExactCase(
        "a name neither has ends the check as a match (upstream's early return)",
        ("gpu", "cpu"),
        {"cpu": 1000},
        {"cpu": 2000},
        True,
    ),
]


@pytest.mark.parametrize("case", EXACT_CASES, ids=lambda c: c.name)
def test_exact_match_reservation(case: ExactCase) -> None:
    assert exact_match(case.requests, case.allocatable, case.names) is case.want


@pytest.mark.parametrize(
    ("annotation", "want"),
    [
        pytest.param(None, None, id="absent"),
        pytest.param("", None, id="empty-is-absent"),
        pytest.param('{"resourceNames":["cpu"]}', ("cpu",), id="names"),
        pytest.param("null", (), id="null-is-no-names"),
        pytest.param("{", "exact-match-reservation is not valid JSON", id="bad-json"),
        pytest.param('{"resourceNames":"cpu"}', "not a list", id="names-not-a-list"),
    ],
)
def test_exact_match_spec_is_read_like_json_unmarshal(annotation: str | None, want: object) -> None:
    pod = web() if annotation is None else web(**{EXACT: annotation})
    got = exact_match_spec(pod)  # type: ignore[arg-type]
    if isinstance(want, str) and want not in ("",):
        assert isinstance(got, str) and want in got
    else:
        assert got == want


def test_a_malformed_exact_match_spec_fails_the_pod() -> None:
    node = koord_node(4, 2)
    result = koordinator.evaluate(node, web(**{EXACT: "{"}), reservations=(resv("a"),))  # type: ignore[arg-type]
    assert not result.fits and "exact-match-reservation" in result.reasons[0].message


def test_an_exact_match_spec_skips_reservations_of_another_size() -> None:
    node = koord_node(4, 2)
    pod = web(**{EXACT: '{"resourceNames":["cpu"]}'})
    two, four = resv("two", 2000), resv("four", 4000)
    split = split_reservations(node, pod, (two, four))  # type: ignore[arg-type]
    assert [r.name for r in split.matched] == ["two"]


# --- restricted resources and matchability ----------------------------------------------


@pytest.mark.parametrize(
    ("names", "options", "want"),
    [
        pytest.param(("cpu", "memory"), (), ("cpu", "memory"), id="no-options-all-allocatable"),
        pytest.param(
            ("cpu", "memory"), ("cpu", "memory"), ("cpu", "memory"), id="options-same-as-names"
        ),
        pytest.param(("cpu", "memory"), ("cpu",), ("cpu",), id="options-narrow-the-names"),
        pytest.param(("cpu", "memory"), ("gpu",), ("cpu", "memory"), id="options-none-reserved"),
    ],
)
def test_get_reservation_restricted_resources(
    names: tuple[str, ...], options: tuple[str, ...], want: tuple[str, ...]
) -> None:
    assert restricted_resources(names, options) == want


RESTRICTED = ReservationAllocatePolicy.RESTRICTED
DEFAULT = ReservationAllocatePolicy.DEFAULT
CPU_ONLY = '{"resources":["cpu"]}'
IGNORED = "scheduling.koordinator.sh/reservation-ignored"


@pytest.mark.parametrize(
    ("policy", "options", "names", "error"),
    [
        pytest.param(RESTRICTED, '{"resources":["cpu"]}', ("cpu",), False, id="restricted-cpu"),
        pytest.param(RESTRICTED, None, ("cpu", "memory"), False, id="restricted-no-options"),
        pytest.param(
            ReservationAllocatePolicy.ALIGNED,
            '{"resources":["cpu"]}',
            ("cpu", "memory"),
            False,
            id="options-only-read-under-restricted",
        ),
        pytest.param(RESTRICTED, "{bad", ("cpu", "memory"), True, id="malformed-is-parse-error"),
        pytest.param(
            ReservationAllocatePolicy.DEFAULT,
            "{bad",
            ("cpu", "memory"),
            False,
            id="default-ignores",
        ),
    ],
)
def test_reservation_resource_names(
    policy: ReservationAllocatePolicy, options: str | None, names: tuple[str, ...], error: bool
) -> None:
    terms = reservation_terms(resv("r", allocate_policy=policy, restricted_options=options))
    assert terms.resource_names == names
    assert bool(terms.parse_error) is error


@dataclass(frozen=True)
class MatchableCase:
    name: str
    changes: dict[str, object] = field(default_factory=dict)
    want: bool = True


OWNER = (ObjectRef(namespace="ns", name="web-0", uid="web-0"),)
MATCHABLE_CASES = [
    MatchableCase("available reservation is matchable"),
    MatchableCase("failed reservation is not matchable", {"phase": ReservationPhase.FAILED}, False),
    MatchableCase(
        "waiting reservation holds but is not matchable", {"phase": ReservationPhase.WAITING}, False
    ),  # fmt: skip
    MatchableCase(
        "reservation with parse error is not matchable",
        {"allocate_policy": RESTRICTED, "restricted_options": "[1"},
        False,
    ),
    MatchableCase(
        "allocateOnce reservation with an owner is used up", {"current_owners": OWNER}, False
    ),  # fmt: skip
    MatchableCase(
        "a reusable reservation with an owner stays matchable",
        {"current_owners": OWNER, "allocate_once": False},
    ),  # fmt: skip
    MatchableCase("a reservation of another node", {"node_name": "n2"}, False),
]


@pytest.mark.parametrize("case", MATCHABLE_CASES, ids=lambda c: c.name)
def test_is_matchable(case: MatchableCase) -> None:
    assert is_matchable(koord_node(4, 2), resv("r", **case.changes)) is case.want


def test_remained_counts_only_the_restricted_names() -> None:
    r = resv("r", 4000, 8 * GI, allocate_policy=RESTRICTED, restricted_options=CPU_ONLY,
             allocated={"cpu": 1000, "memory": GI})  # fmt: skip
    assert remained_of(r) == {"cpu": 3000, "memory": 8 * GI}


def test_booking_an_owner_adds_its_masked_requests_once() -> None:
    r = resv("r", 4000, 8 * GI, allocate_policy=RESTRICTED, restricted_options=CPU_ONLY)
    booked = book_owner(r, web("1", "1Gi"), "uid-1")  # type: ignore[arg-type]
    assert booked.allocated == {"cpu": 1000}
    assert [o.uid for o in booked.current_owners] == ["uid-1"]
    assert book_owner(booked, web("1", "1Gi"), "uid-1") is booked  # type: ignore[arg-type]


# --- nomination --------------------------------------------------------------------------------


@dataclass(frozen=True)
class NominateCase:
    name: str
    reservations: tuple[ReservationSnapshot, ...]
    want: str | None


FOUR, TWO = resv("4c8g", 4000, 8 * GI), resv("2c4g", 2000, 4 * GI)
NOMINATE_CASES = [
    NominateCase("node without reservations", (), None),
    NominateCase(
        "preferred reservation by order label",
        (resv("preferred", labels={ORDER: "100"}), resv("normal")),
        "preferred",
    ),
    NominateCase(
        "allocated reservation is passed over",
        (
            FOUR,
            replace(
                TWO,
                allocate_once=False,
                allocated={"cpu": 2000, "memory": 4 * GI},
                current_owners=OWNER,
            ),
        ),
        "4c8g",
    ),  # fmt: skip
    NominateCase("matched reservations: the fullest after use", (FOUR, TWO), "2c4g"),
    NominateCase(
        "the lowest order wins, 0 and unparsable orders are ignored",
        (
            resv("a", labels={ORDER: "0"}),
            resv("b", labels={ORDER: "x1"}),
            resv("c", labels={ORDER: "123456"}),
            resv("d", labels={ORDER: "99"}),
        ),
        "d",
    ),
    NominateCase(
        "a Restricted reservation the pod over-asks is not nominated",
        (resv("small", 1000, allocate_policy=RESTRICTED), resv("big", 8000, 16 * GI)),
        "big",
    ),
]


@pytest.mark.parametrize("case", NOMINATE_CASES, ids=lambda c: c.name)
def test_nominate_reservation(case: NominateCase) -> None:
    node, pod = koord_node(4, 2), web("2", "4Gi")
    split = split_reservations(node, pod, case.reservations)  # type: ignore[arg-type]
    got = nominate(node, pod, split, {"cpu": 2000, "memory": 4 * GI})  # type: ignore[arg-type]
    assert (got.name if got else None) == case.want


@pytest.mark.parametrize(
    ("text", "want"),
    [("100", 100), ("+7", 7), ("-3", -3), ("1e3", None), (" 5", None), ("", None),
     ("9223372036854775808", None)],
)  # fmt: skip
def test_go_parse_int64(text: str, want: int | None) -> None:
    assert go_parse_int64(text) == want


# --- the reservation plugin's Filter and Reserve ------------------------------------------------


def test_an_affinity_pod_is_refused_by_a_restricted_reservation_it_over_asks() -> None:
    node = koord_node(4, 2)
    small = resv("small", 1000, 4 * GI, allocate_policy=RESTRICTED)
    pod = web("2", "1Gi", **{AFFINITY: "{}"})
    result = koordinator.evaluate(node, pod, reservations=(small,))  # type: ignore[arg-type]
    assert not result.fits
    assert [r.message for r in result.reasons] == ["Reservation(s) Insufficient cpu"]
    aligned = replace(small, allocate_policy=ReservationAllocatePolicy.ALIGNED)
    assert koordinator.evaluate(node, pod, reservations=(aligned,)).fits  # type: ignore[arg-type]


def test_a_pod_without_numa_allocation_still_records_its_reservation() -> None:
    node = koord_node(4, 2)
    result = koordinator.allocate(node, web("1", "1Gi"), reservations=(resv("a"),))  # type: ignore[arg-type]
    assert json.loads(result.annotations[ALLOCATED]) == {"name": "a", "uid": "uid-a"}


def test_a_reservation_ignored_pod_records_no_reservation() -> None:
    node = koord_node(4, 2)
    pod = lsr_pod(
        "1",
        qos="LS",
        labels={"app": "web", IGNORED: "true"},
    )
    result = koordinator.allocate(node, pod, reservations=(resv("a"),))
    assert ALLOCATED not in result.annotations


def test_an_owner_beyond_its_reservation_drops_out_of_the_schedulers_books() -> None:
    """Upstream quirk (koordinator v1.8.0 nodenumaresource/reservation.go): a reservation's
    owners are given back in full (`used` = allocatable - remained, never capped at what
    it reserved). An owner that took 2 cpus on NUMA node 0 from a 1-cpu reservation
    leaves the scheduler seeing 1 cpu used there, so another pod is placed on a NUMA node
    that is really full: the engine places it too, as koord-scheduler would."""
    labels = {"node.koordinator.sh/numa-topology-policy": "SingleNUMANode"}
    node = koord_node(2, 2, labels=labels, used={1: 2000})
    owner = PodAllocation("ns", "owner", "uid-owner", AllocationSource.KOORDINATOR,
                          numa_resources={0: {"cpu": 2000}}, reservation_uid="uid-r")  # fmt: skip
    node = replace(node, allocations=(*node.allocations, owner))
    other = lsr_pod("1", labels={"app": "batch"})
    small = resv("r", 1000, 0, allocate_once=False, numa_resources={0: {"cpu": 1000}})
    result = koordinator.allocate(node, other, reservations=(small,))
    assert result.fits and result.numa_zones == (0,)
    whole = resv("r", 2000, 0, allocate_once=False, numa_resources={0: {"cpu": 2000}})
    assert not koordinator.evaluate(node, other, reservations=(whole,)).fits


# --- place(): replicas book the reservation -----------------------------------------------------


def _nodes() -> tuple[NodeSnapshot, ...]:
    return (koord_node(4, 2), replace(koord_node(4, 2), name="n2"))


def test_replicas_share_a_reusable_restricted_reservation_until_it_is_used_up() -> None:
    r = resv("r", 4000, 8 * GI, allocate_once=False, allocate_policy=RESTRICTED)
    pod = web("2", "1Gi", **{AFFINITY: '{"name":"r"}'})
    placed = place(ClusterSnapshot(_nodes(), (r,)), pod, 3, scheduler="koordinator", capacity=False)  # type: ignore[arg-type]
    assert [p.node for p in placed.placements] == ["n1", "n1", None]


def test_an_allocate_once_reservation_serves_one_replica() -> None:
    pod = web("1", "1Gi", **{AFFINITY: "{}"})
    cluster = ClusterSnapshot(_nodes(), (resv("a"), resv("b", node="n2")))
    placed = place(cluster, pod, 3, scheduler="koordinator", capacity=False)  # type: ignore[arg-type]
    assert sorted(p.node or "-" for p in placed.placements) == ["-", "n1", "n2"]


def test_capacity_counts_the_copies_a_reservation_admits() -> None:
    r = resv("r", 4000, 8 * GI, allocate_once=False, allocate_policy=RESTRICTED)
    pod = web("1", "1Gi", **{AFFINITY: '{"name":"r"}'})
    placed = place(ClusterSnapshot(_nodes(), (r,)), pod, 0, scheduler="koordinator")  # type: ignore[arg-type]
    assert placed.capacity is not None and placed.capacity.per_node == {"n1": 4}


# --- numa-allocate-strategy ---------------------------------------------------------------------


@dataclass(frozen=True)
class StrategyCase:
    name: str
    label: str
    numa_scoring: str
    want: str


STRATEGY_CASES = [
    StrategyCase(
        "default from LeastAllocated NUMA scoring", "", "LeastAllocated", "LeastAllocated"
    ),
    StrategyCase("default from MostAllocated NUMA scoring", "", "MostAllocated", "MostAllocated"),
    StrategyCase(
        "the node label beats the default", "MostAllocated", "LeastAllocated", "MostAllocated"
    ),  # fmt: skip
    StrategyCase(
        "DistributeEvenly is taken as written",
        "DistributeEvenly",
        "MostAllocated",
        "DistributeEvenly",
    ),  # fmt: skip
]


@pytest.mark.parametrize("case", STRATEGY_CASES, ids=lambda c: c.name)
def test_numa_allocate_strategy(case: StrategyCase) -> None:
    node = koord_node(4, 2, labels={STRATEGY: case.label} if case.label else {})
    config = KoordConfig(numa_scoring_strategy=case.numa_scoring)
    assert numa_allocate_strategy(node, config) == case.want


def _cpus_taken(
    labels: dict[str, str], annotations: dict[str, str] | None = None
) -> frozenset[int]:
    """The cpu one LSR pod gets where NUMA 0 has cpus 0 and 1 of its four held:
    MostAllocated packs onto NUMA 0, LeastAllocated goes to NUMA 1."""
    held = replace(koord_node(4, 2, used={0: 2000}), labels=labels)
    allocations = tuple(replace(a, cpuset=frozenset({0, 1})) for a in held.allocations)
    held = replace(held, allocations=allocations)
    result = koordinator.allocate(held, lsr_pod("1", annotations=annotations))
    assert result.cpuset is not None
    return result.cpuset


def test_the_node_label_picks_cpus_and_a_pod_level_strategy_is_not_read() -> None:
    most, least = {STRATEGY: "MostAllocated"}, {STRATEGY: "LeastAllocated"}
    assert _cpus_taken(most) <= {2, 3}
    assert _cpus_taken(least) <= {4, 5, 6, 7}
    assert _cpus_taken({STRATEGY: "DistributeEvenly"}) == _cpus_taken(least)
    # v1.8.0's NUMATopologySpec has no numaAllocateStrategy: the pod cannot override
    spec = {
        "scheduling.koordinator.sh/numa-topology-spec": '{"numaAllocateStrategy":"MostAllocated"}'
    }
    assert _cpus_taken(least, spec) == _cpus_taken(least)


def test_the_enable_numa_reservation_label_is_koordlets_not_the_schedulers() -> None:
    """koordlet deducts kubelet-reserved amounts from the NRT zones it reports; the
    scheduler reads the zones as published and never the label itself."""
    plain = koord_node(4, 2)
    labelled = replace(plain, labels={"node.koordinator.sh/enable-numa-reservation": "true"})
    pod = lsr_pod("2")
    assert koordinator.allocate(plain, pod) == koordinator.allocate(labelled, pod)
