"""koord-scheduler NodeNUMAResource: policies, hints, merge, allocation, annotations."""

from __future__ import annotations

import json
from dataclasses import replace
from typing import Any

import pytest

from scheduler_api.engine.koordinator.reference import plugin as koordinator
from scheduler_api.engine.koordinator.reference import pod as koordinator_pod
from scheduler_api.engine.koordinator.reference.merge import Hint, mask_str, merge
from scheduler_api.engine.koordinator.reference.numa import Allocation
from scheduler_api.engine.koordinator.reference.plugin import KoordConfig
from scheduler_api.engine.koordinator.reference.reservation import nominate, split_reservations
from scheduler_api.engine.koordinator.reference.state import nrt_numa_policy
from scheduler_api.engine.model.results import Reason, ReasonCheck, parse_cpuset
from scheduler_api.engine.model.snapshot import (
    ANN_KOORD_NUMA_SPEC,
    ANN_KOORD_RESOURCE_SPEC,
    ANN_KOORD_RESOURCE_STATUS,
    AllocationSource,
    ClusterSnapshot,
    Flavour,
    LabelSelector,
    NodeSnapshot,
    PodAllocation,
    PodSpec,
    ReservationOwner,
    ReservationPhase,
    ReservationSnapshot,
    ResourceAmounts,
    Zone,
)
from scheduler_api.engine.whatif.evaluate import place
from tests.engine.data_nrt_builders import amount, amounts, container, pod

GI = 2**30
AMOUNT_KEYS = ("capacity", "allocatable", "available")
MOST = KoordConfig(numa_scoring_strategy="MostAllocated")


def koord_node(
    cpus_per_numa: int = 32,
    numas: int = 2,
    *,
    labels: dict[str, str] | None = None,
    used: dict[int, int] | None = None,
    policies: tuple[str, ...] = ("None",),
    threads: int = 1,
    **extra: Any,
) -> NodeSnapshot:
    """One socket, `numas` NUMA nodes; `used` millicpu already placed per NUMA (no cpuset)."""
    rows = []
    cpu = 0
    for numa in range(numas):
        for core in range(cpus_per_numa // threads):
            for _ in range(threads):
                rows.append((cpu, numa * 1000 + core, 0, numa))
                cpu += 1
    zones = tuple(
        Zone(n, f"node-{n}", {"cpu": ResourceAmounts(*[cpus_per_numa * 1000] * 3)})
        for n in range(numas)
    )
    held = tuple(
        PodAllocation("ns", f"held-{n}", f"held-{n}", AllocationSource.KOORDINATOR,
                      numa_resources={n: {"cpu": m}})
        for n, m in (used or {}).items()
    )  # fmt: skip
    return NodeSnapshot(
        name="n1",
        flavour=Flavour.KOORDINATOR,
        labels=labels or {},
        allocatable={"cpu": cpus_per_numa * numas * 1000, "memory": 256 * GI},
        topology_policies=policies,
        zones=zones,
        cpus=tuple(rows),
        allocations=held,
        **extra,
    )


def lsr_pod(
    cpu: str,
    memory: str = "1Gi",
    *,
    qos: str = "LSR",
    labels: dict[str, str] | None = None,
    annotations: dict[str, str] | None = None,
    name: str = "p",
) -> PodSpec:
    return pod(
        container("c", {"cpu": cpu, "memory": memory}),
        name=name,
        labels={"koordinator.sh/qosClass": qos, **(labels or {})},
        annotations=annotations or {},
        priority=9000,
    )


# --- policy resolution ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("policies", "want"),
    [
        pytest.param(("BestEffort",), "BestEffort", id="best-effort"),
        pytest.param(("Restricted",), "Restricted", id="restricted"),
        pytest.param(("SingleNUMANodePodLevel",), "SingleNUMANode", id="single-numa-pod-level"),
        pytest.param(("SingleNUMANodeContainerLevel",), "", id="container-level-not-recognised"),
        pytest.param(("BestEffortPodLevel",), "", id="best-effort-pod-level-not-recognised"),
        pytest.param(("None", "Restricted"), "Restricted", id="first-recognised-entry-wins"),
        pytest.param((), "", id="no-policies"),
    ],
)
def test_nrt_policy_mapping(policies: tuple[str, ...], want: str) -> None:
    assert nrt_numa_policy(policies) == want


def test_a_non_empty_node_label_beats_the_nrt_policy() -> None:
    node = koord_node(labels={"node.koordinator.sh/numa-topology-policy": "Restricted"},
                      policies=("SingleNUMANodePodLevel",))  # fmt: skip
    spec = lsr_pod(
        "4", qos="LS", annotations={ANN_KOORD_NUMA_SPEC: '{"numaTopologyPolicy":"SingleNUMANode"}'}
    )
    result = koordinator.evaluate(node, spec)
    assert not result.fits and result.reasons[0].check is ReasonCheck.POLICY_MISMATCH


def test_pod_policy_applies_on_a_node_without_one() -> None:
    node = koord_node(used={0: 30_000, 1: 30_000})
    spec = lsr_pod(
        "4", qos="LS", annotations={ANN_KOORD_NUMA_SPEC: '{"numaTopologyPolicy":"SingleNUMANode"}'}
    )
    result = koordinator.evaluate(node, spec)
    assert not result.fits and result.reasons[0].check is ReasonCheck.UNALIGNED_HINT


# --- the merge (frameworkext/topologymanager commonPolicyMergeTestCases) -------------------


def h(*bits: int, preferred: bool = True) -> Hint:
    return Hint(frozenset(bits), preferred)


COMMON_MERGE_CASES = [
    pytest.param([{"r1": [h(0)]}, {"r2": [h(0)]}], {0}, id="two-providers-same-mask-preferred-1"),
    pytest.param([{"r1": [h(1)]}, {"r2": [h(1)]}], {1}, id="two-providers-same-mask-preferred-2"),
    pytest.param([{}, {"r": [h(0)]}], {0}, id="one-provider-without-hints-1"),
    pytest.param([{}, {"r": [h(1)]}], {1}, id="one-provider-without-hints-2"),
    pytest.param([{"r1": [h(0), h(1)]}, {"r2": [h(0)]}], {0}, id="two-hints-vs-one-matching-1"),
    pytest.param([{"r1": [h(0), h(1)]}, {"r2": [h(1)]}], {1}, id="two-hints-vs-one-matching-2"),
    pytest.param([{"r1": [h(0), h(1)]}, {"r2": [h(0), h(0, 1, preferred=False)]}], {0},
                 id="narrower-preferred-from-both"),
    pytest.param([{"r1": [h(1), h(0, 1, preferred=False)]},
                  {"r2": [h(0), h(1), h(0, 1, preferred=False)]}], {1},
                 id="less-narrow-preferred-beats-narrower-non-preferred"),
    pytest.param([{"r1": [h(1), h(0, 1, preferred=False)],
                   "r2": [h(0), h(1), h(0, 1, preferred=False)]}], {1},
                 id="multiple-resources-same-provider"),
]  # fmt: skip


@pytest.mark.parametrize("policy", ["BestEffort", "Restricted", "SingleNUMANode"])
@pytest.mark.parametrize(("providers", "want"), COMMON_MERGE_CASES)
def test_common_merge_cases(
    policy: str, providers: list[dict[str, list[Hint]]], want: set[int]
) -> None:
    result = merge(policy, [0, 1], providers)
    assert result.hint.mask == frozenset(want) and result.hint.preferred and result.admit


def test_unsatisfiable_resource_is_a_reason() -> None:
    result = merge("Restricted", [0, 1], [{"resource": []}])
    assert not result.admit and result.reasons == ("Unsatisfied NUMA resource",)


def test_no_common_mask_explains_every_resource() -> None:
    result = merge("Restricted", [0, 1], [{"resource1": [h(0)]}, {"resource2": [h(1)]}])
    assert result.reasons == (
        "Unaligned NUMA Hint cause resource1 prefer [01] among [01]"
        " & resource2 prefer [10] among [10]",
    )


def test_best_effort_admits_the_unaligned() -> None:
    result = merge("BestEffort", [0, 1], [{"resource1": [h(0)]}, {"resource2": [h(1)]}])
    assert result.admit and result.hint.mask == frozenset({0, 1}) and not result.hint.preferred


def test_single_numa_on_a_one_numa_machine_becomes_any_numa() -> None:
    result = merge("SingleNUMANode", [0], [{"cpu": [h(0)]}])
    assert result.admit and result.hint.mask is None


@pytest.mark.parametrize(
    ("bits", "text"),
    [
        ((0,), "01"),
        ((1,), "10"),
        ((0, 1), "11"),
        ((2,), "100"),
        ((6,), "1000000"),  # 64 is not above 1 << 6: padded to 6 digits, printed in 7
        ((7,), "10000000"),
        ((0, 7), "10000001"),
        (tuple(range(8)), "11111111"),
        ((8,), "100000000"),
        ((63,), "1" + "0" * 63),
    ],
)
def test_mask_string_is_gos(bits: tuple[int, ...], text: str) -> None:
    assert mask_str(frozenset(bits)) == text
    assert mask_str(frozenset(bits)) == text  # the second time from memory


def test_equal_width_hints_are_tied_by_score() -> None:
    merged = merge(
        "SingleNUMANode",
        [0, 1],
        [{"cpu": [Hint(frozenset({0}), True, 12), Hint(frozenset({1}), True, 62)]}],
    )
    assert merged.hint.mask == frozenset({1})


# --- formats.md §8 worked example: MostAllocated 87 vs 37 ----------------------------------


@pytest.mark.parametrize(
    ("config", "want_zone"),
    [pytest.param(MOST, 0, id="most-allocated-packs-numa-0"),
     pytest.param(KoordConfig(), 1, id="least-allocated-spreads-to-numa-1")],
)  # fmt: skip
def test_numa_hint_scores_decide_the_zone(config: KoordConfig, want_zone: int) -> None:
    node = koord_node(labels={"node.koordinator.sh/numa-topology-policy": "SingleNUMANode"},
                      used={0: 24_000, 1: 8_000})  # fmt: skip
    result = koordinator.allocate(node, lsr_pod("4", qos="LS"), config=config)
    assert result.fits and result.numa_zones == (want_zone,)
    status = json.loads(result.annotations[ANN_KOORD_RESOURCE_STATUS])
    assert status == {
        # memory is not published per NUMA here, so only cpu is placed
        "numaNodeResources": [{"node": want_zone, "resources": {"cpu": "4"}}]
    }


def test_hint_scores_are_87_and_37_most_allocated() -> None:
    from scheduler_api.engine.koordinator.reference import numa as kn

    node = koord_node(labels={"node.koordinator.sh/numa-topology-policy": "SingleNUMANode"},
                      used={0: 24_000, 1: 8_000})  # fmt: skip
    for config, want in ((MOST, [87, 37, 56]), (KoordConfig(), [12, 62, 43])):
        state = koordinator.prefilter(lsr_pod("4", qos="LS"), config)
        run = koordinator.node_run(node, lsr_pod("4", qos="LS"), state, (), config)
        assert not isinstance(run, Reason)
        hints = kn.topology_hints(
            run.ctx, koordinator.resource_options(run, None), "SingleNUMANode", ()
        )
        assert not isinstance(hints, Reason)
        assert [x.score for x in hints["cpu"]] == want


# --- cpusets --------------------------------------------------------------------------------


def test_full_pcpus_packs_whole_cores() -> None:
    node = koord_node(16, 1, threads=2)
    result = koordinator.allocate(node, lsr_pod("4"))
    assert result.cpuset == frozenset({0, 1, 2, 3})
    assert json.loads(result.annotations[ANN_KOORD_RESOURCE_STATUS]) == {"cpuset": "0-3"}


def test_spread_by_pcpus_takes_one_thread_per_core() -> None:
    node = koord_node(16, 1, threads=2)
    spec = lsr_pod(
        "4", annotations={ANN_KOORD_RESOURCE_SPEC: '{"preferredCPUBindPolicy":"SpreadByPCPUs"}'}
    )
    assert koordinator.allocate(node, spec).cpuset == frozenset({0, 2, 4, 6})


def test_ls_pods_get_no_cpuset() -> None:
    result = koordinator.allocate(koord_node(16, 1, threads=2), lsr_pod("4", qos="LS"))
    assert result.fits and result.cpuset is None and not result.annotations


@pytest.mark.parametrize(
    ("spec", "cpu", "labels", "check"),
    [
        pytest.param(None, "1500m", {}, ReasonCheck.INVALID_CPU_REQUEST,
                     id="fractional-cpus-with-bind-policy"),
        pytest.param(None, "3", {"node.koordinator.sh/cpu-bind-policy": "FullPCPUsOnly"},
                     ReasonCheck.SMT_ALIGNMENT, id="odd-cpus-on-full-pcpus-only-node"),
        pytest.param('{"requiredCPUBindPolicy":"SpreadByPCPUs"}', "2",
                     {"node.koordinator.sh/cpu-bind-policy": "FullPCPUsOnly"},
                     ReasonCheck.CPU_BIND_POLICY_CONFLICT,
                     id="required-policy-conflicts-with-node"),
        pytest.param("{not json", "2", {}, ReasonCheck.INVALID_ANNOTATION,
                     id="malformed-resource-spec"),
    ],
)  # fmt: skip
def test_cpu_bind_refusals(
    spec: str | None, cpu: str, labels: dict[str, str], check: ReasonCheck
) -> None:
    annotations = {ANN_KOORD_RESOURCE_SPEC: spec} if spec else {}
    result = koordinator.evaluate(
        koord_node(16, 1, threads=2, labels=labels), lsr_pod(cpu, annotations=annotations)
    )
    assert not result.fits and result.reasons[0].check is check


def test_a_node_without_cpu_topology_refuses_cpu_binding() -> None:
    node = NodeSnapshot(name="n", flavour=Flavour.UPSTREAM_V1ALPHA2)
    result = koordinator.evaluate(node, lsr_pod("2"))
    assert not result.fits and result.reasons[0].check is ReasonCheck.INVALID_CPU_TOPOLOGY


def test_no_numa_policy_scores_the_whole_node_least_allocated() -> None:
    node = koord_node(16, 1, threads=2, requested={"cpu": 8_000, "memory": 64 * GI})
    result = koordinator.evaluate(node, lsr_pod("8", "64Gi", qos="LS"))
    # cpu (16 - 16) / 16 -> 0, memory (256 - 128) / 256 -> 50
    assert result.score == 25


def test_resource_status_rendering_matches_formats_example() -> None:
    alloc = Allocation(parse_cpuset("2-5"), ((0, {"cpu": 4000, "memory": 8 * GI}),), "")
    text = koordinator.render_resource_status(alloc, {})
    assert (
        text == '{"cpuset":"2-5","numaNodeResources":'
        '[{"node":0,"resources":{"cpu":"4","memory":"8Gi"}}]}'
    )


def test_resource_status_keeps_the_request_format() -> None:
    alloc = Allocation(frozenset(), ((1, {"cpu": 500, "memory": 8 * 10**9}),), "")
    formats = koordinator_pod.pod_requests(pod(container("c", {"cpu": "500m", "memory": "8G"})))[1]
    text = koordinator.render_resource_status(alloc, formats)
    assert text == '{"numaNodeResources":[{"node":1,"resources":{"cpu":"500m","memory":"8G"}}]}'


# --- reservations ---------------------------------------------------------------------------


def test_owner_matching_by_label_selector_expression() -> None:
    from scheduler_api.engine.koordinator.reference.reservation import matches_owners
    from scheduler_api.engine.model.snapshot import LabelRequirement, ObjectRef

    web = lsr_pod("1", labels={"app": "web", "tier": "front"}, name="web-0")
    owners = (ReservationOwner(label_selector=LabelSelector(
        {"app": "web"}, (LabelRequirement("tier", "In", ("front", "edge")),))),)  # fmt: skip
    assert matches_owners(web, owners)
    assert not matches_owners(lsr_pod("1", labels={"app": "web"}), owners)
    assert matches_owners(
        web, (ReservationOwner(object=ObjectRef(namespace="default", name="web-0")),)
    )
    assert not matches_owners(
        web, (ReservationOwner(object=ObjectRef(name="web-0", api_version="v1")),)
    )
    assert not matches_owners(web, ())


# --- real sample: worker-03 ---------------------------------------------------------------------


def node_from_sample(items: list[dict[str, Any]]) -> NodeSnapshot:
    """Minimal parse of node-koordinator-v1alpha1.json (the real parsers live in topology/)."""
    node = next(i for i in items if i["kind"] == "Node")
    nrt = next(i for i in items if i["kind"] == "NodeResourceTopology")
    ann = nrt["metadata"]["annotations"]
    topo = json.loads(ann["node.koordinator.sh/cpu-topology"])["detail"]
    kubelet = json.loads(ann["kubelet.koordinator.sh/cpu-manager-policy"])
    allocations: list[PodAllocation] = [
        PodAllocation(
            a["namespace"], a["name"], a["uid"], AllocationSource.KUBELET, parse_cpuset(a["cpuset"])
        )
        for a in json.loads(ann["node.koordinator.sh/pod-cpu-allocs"])
    ]
    for item in items:
        status = item["metadata"].get("annotations", {}).get(ANN_KOORD_RESOURCE_STATUS)
        if item["kind"] != "Pod" or not status:
            continue
        raw = json.loads(status)
        reservation = json.loads(item["metadata"]["annotations"].get(
            "scheduling.koordinator.sh/reservation-allocated", "{}"))  # fmt: skip
        allocations.append(PodAllocation(
            item["metadata"]["namespace"], item["metadata"]["name"], item["metadata"]["uid"],
            AllocationSource.KOORDINATOR, parse_cpuset(raw.get("cpuset", "")),
            {r["node"]: amounts(r["resources"]) for r in raw.get("numaNodeResources", [])},
            reservation_uid=reservation.get("uid", ""),
        ))  # fmt: skip
    zones = tuple(
        Zone(int(z["name"].removeprefix("node-")), z["name"],
             {r["name"]: ResourceAmounts(*(amount(r["name"], r[k]) for k in AMOUNT_KEYS))
              for r in z["resources"]})
        for z in nrt["zones"]
    )  # fmt: skip
    return NodeSnapshot(
        name=node["metadata"]["name"],
        flavour=Flavour.KOORDINATOR,
        labels=node["metadata"]["labels"],
        allocatable=amounts(node["status"]["allocatable"]),
        topology_policies=tuple(nrt["topologyPolicies"]),
        zones=zones,
        cpus=tuple((c["id"], c["core"], c["socket"], c["node"]) for c in topo),
        cpu_manager_policy=kubelet["policy"],
        cpu_manager_options=kubelet.get("options", {}),
        kubelet_reserved_cpus=parse_cpuset(kubelet.get("reservedCPUs", "")),
        node_reserved_cpus=parse_cpuset(
            json.loads(ann["node.koordinator.sh/reservation"]).get("reservedCPUs", "")
        ),
        allocations=tuple(allocations),
    )


def reservations_from_sample(items: list[dict[str, Any]]) -> tuple[ReservationSnapshot, ...]:
    result = []
    for r in items:
        status = json.loads(
            r["metadata"].get("annotations", {}).get(ANN_KOORD_RESOURCE_STATUS, "{}")
        )
        owners = tuple(
            ReservationOwner(label_selector=LabelSelector(o["labelSelector"]["matchLabels"]))
            for o in r["spec"]["owners"] if "labelSelector" in o
        )  # fmt: skip
        result.append(ReservationSnapshot(
            name=r["metadata"]["name"], uid=r["metadata"]["uid"],
            node_name=r["status"].get("nodeName", ""), phase=ReservationPhase(r["status"]["phase"]),
            owners=owners, allocatable=amounts(r["status"].get("allocatable", {})),
            allocated=amounts(r["status"].get("allocated", {})),
            allocate_once=r["spec"].get("allocateOnce", True),
            cpuset=parse_cpuset(status.get("cpuset", "")),
            numa_resources={
                n["node"]: amounts(n["resources"]) for n in status.get("numaNodeResources", [])
            },
        ))  # fmt: skip
    return tuple(result)


@pytest.fixture
def worker_03(load_sample: Any) -> NodeSnapshot:
    return node_from_sample(load_sample("node-koordinator-v1alpha1.json")["items"])


@pytest.fixture
def sample_reservations(load_sample: Any) -> tuple[ReservationSnapshot, ...]:
    return reservations_from_sample(load_sample("reservations.json")["items"])


def test_sample_excludes_pinned_reserved_and_annotated_cpus(worker_03: NodeSnapshot) -> None:
    from scheduler_api.engine.koordinator.reference.state import excluded_cpus

    assert excluded_cpus(worker_03) == parse_cpuset("0,11,14-16,27,30-31")


def test_sample_lsr_pod_gets_the_two_free_cores(
    worker_03: NodeSnapshot, sample_reservations: tuple[ReservationSnapshot, ...]
) -> None:
    spec = lsr_pod(
        "4", annotations={ANN_KOORD_RESOURCE_SPEC: '{"preferredCPUBindPolicy":"FullPCPUs"}'}
    )
    result = koordinator.allocate(worker_03, spec, reservations=sample_reservations)
    assert result.fits and result.cpuset == parse_cpuset("12-13,28-29")
    assert result.annotations[ANN_KOORD_RESOURCE_STATUS] == '{"cpuset":"12-13,28-29"}'
    # kubelet's full-pcpus-only made FullPCPUs required: PreBind writes it back
    assert json.loads(result.annotations[ANN_KOORD_RESOURCE_SPEC]) == {
        "requiredCPUBindPolicy": "FullPCPUs",
        "preferredCPUBindPolicy": "FullPCPUs",
    }


def test_sample_lsr_pod_of_six_cpus_does_not_fit(
    worker_03: NodeSnapshot, sample_reservations: tuple[ReservationSnapshot, ...]
) -> None:
    result = koordinator.evaluate(worker_03, lsr_pod("6"), reservations=sample_reservations)
    assert not result.fits
    assert result.reasons[0].message == "not enough cpus available to satisfy request"


def test_sample_reservation_owner_uses_the_reserved_cpus_first(
    worker_03: NodeSnapshot, sample_reservations: tuple[ReservationSnapshot, ...]
) -> None:
    web = lsr_pod("4", labels={"app": "web"})
    assert koordinator.allocate(
        worker_03, web, reservations=sample_reservations
    ).cpuset == parse_cpuset("1-2,17-18")
    wide = koordinator.allocate(
        worker_03, lsr_pod("8", labels={"app": "web"}), reservations=sample_reservations
    )
    assert wide.cpuset == parse_cpuset("1-2,12-13,17-18,28-29")


def test_sample_without_reservations_frees_nothing(worker_03: NodeSnapshot) -> None:
    """Reservation cpus are only held when the reservation is passed in."""
    result = koordinator.allocate(worker_03, lsr_pod("8"))
    assert result.cpuset == parse_cpuset("1-2,12-13,17-18,28-29")


# --- upstream edge cases ---------------------------------------------------------------------


@pytest.mark.parametrize("label", ["None", "bestEffort", "Bogus"])
def test_a_numa_policy_label_koord_scheduler_has_no_policy_for_is_a_scheduler_error(label) -> None:
    node = koord_node(4, 2, labels={"node.koordinator.sh/numa-topology-policy": label})
    result = koordinator.allocate(node, lsr_pod("2", qos="LS"))
    assert not result.fits and result.annotations == {}
    (reason,) = result.reasons
    assert reason.check is ReasonCheck.SCHEDULER_ERROR
    assert repr(label) in reason.message


def test_a_weight_on_pods_is_skipped_as_koord_scheduler_reads_no_allocatable_for_it() -> None:
    node = koord_node(8, 2)
    node = replace(
        node,
        allocatable={"cpu": 16000, "memory": 256 * GI, "pods": 110},
        requested={"cpu": 8000, "memory": 64 * GI, "pods": 100},
    )
    spec = lsr_pod("8", "64Gi", qos="LS")
    plain = koordinator.evaluate(
        node, spec, config=KoordConfig(resource_weights={"cpu": 1, "memory": 1})
    )
    weighted = koordinator.evaluate(
        node, spec, config=KoordConfig(resource_weights={"cpu": 1, "memory": 1, "pods": 5})
    )
    assert plain.score == weighted.score == (0 + 50) // 2


@pytest.mark.parametrize(
    ("phase", "fits"),
    [
        (ReservationPhase.AVAILABLE, False),
        (ReservationPhase.WAITING, False),  # IsReservationActive: Waiting holds as well
        (ReservationPhase.SUCCEEDED, True),
    ],
)
def test_an_active_reservation_of_another_owner_holds_its_cpus(phase, fits) -> None:
    node = koord_node(4, 2)
    held = ReservationSnapshot(
        name="db",
        uid="uid-db",
        node_name=node.name,
        phase=phase,
        owners=(ReservationOwner(label_selector=LabelSelector({"app": "db"})),),
        allocatable={"cpu": 6000},
        cpuset=frozenset(range(6)),
        numa_resources={0: {"cpu": 4000}, 1: {"cpu": 2000}},
    )
    spec = lsr_pod("4", labels={"app": "web"})
    result = koordinator.allocate(node, spec, reservations=(held,))
    assert result.fits is fits


def _web_reservation(
    node: NodeSnapshot,
    name: str,
    cpus: frozenset[int],
    numa: int,
    *,
    memory: int = 0,
    allocate_once: bool = True,
) -> ReservationSnapshot:
    """A reservation of `cpus` on NUMA node `numa` (and `memory`) for pods app=web."""
    amounts = {"cpu": len(cpus) * 1000, **({"memory": memory} if memory else {})}
    return ReservationSnapshot(
        name=name,
        uid=f"uid-{name}",
        node_name=node.name,
        phase=ReservationPhase.AVAILABLE,
        owners=(ReservationOwner(label_selector=LabelSelector({"app": "web"})),),
        allocatable=amounts,
        cpuset=cpus,
        numa_resources={numa: amounts},
        allocate_once=allocate_once,
    )


def test_a_reservation_the_pod_would_over_ask_scores_nothing_for_that_resource() -> None:
    node = koord_node(4, 2)
    # the pod's 4 cpus over-ask a (2 cpus): a scores 50 (memory only), b 62
    small = _web_reservation(node, "a", frozenset({0, 1}), 0, memory=4 * GI)
    large = _web_reservation(node, "b", frozenset({4, 5, 6, 7}), 1, memory=16 * GI)
    spec = lsr_pod("4", "4Gi", labels={"app": "web"})
    split = split_reservations(node, spec, (small, large))
    assert nominate(node, spec, split, {"cpu": 4000, "memory": 4 * GI}) is large


def test_a_pod_placed_from_a_reservation_records_it_and_uses_it_up() -> None:
    node = koord_node(4, 2, used={0: 2000, 1: 1000})
    node = replace(
        node,
        allocations=tuple(
            replace(a, cpuset=frozenset({2, 3}) if a.numa_resources.get(0) else frozenset({6}))
            for a in node.allocations
        ),
    )
    first, second = (
        _web_reservation(node, "a", frozenset({0, 1}), 0),
        _web_reservation(node, "b", frozenset({4, 5}), 1),
    )
    spec = lsr_pod("2", labels={"app": "web"})
    result = koordinator.allocate(node, spec, reservations=(first, second))
    assert result.cpuset == {0, 1}
    allocated = json.loads(result.annotations["scheduling.koordinator.sh/reservation-allocated"])
    assert allocated == {"name": "a", "uid": "uid-a"}
    # a is allocateOnce: the second replica takes b, not a's CPUs again
    placed = place(ClusterSnapshot((node,), (first, second)), spec, 2, scheduler="koordinator")
    assert [p.cpuset for p in placed.placements] == [{0, 1}, {4, 5}]


AFFINITY = "scheduling.koordinator.sh/reservation-affinity"


def test_a_reservation_affinity_by_name_uses_that_reservation_only() -> None:
    node = koord_node(4, 2)
    first = _web_reservation(node, "a", frozenset({0, 1, 2, 3}), 0)
    second = replace(_web_reservation(node, "b", frozenset({4, 5, 6, 7}), 1), unschedulable=True)
    spec = lsr_pod("4", labels={"app": "web"}, annotations={AFFINITY: '{"name": "b"}'})
    # named, b is used although it is unschedulable; a, also owned, is not
    result = koordinator.allocate(node, spec, reservations=(first, second))
    assert result.cpuset == {4, 5, 6, 7}


def test_a_pod_with_a_reservation_affinity_needs_a_matching_reservation_on_the_node() -> None:
    node = koord_node(4, 2)
    spec = lsr_pod("2", qos="LS", labels={"app": "web"}, annotations={AFFINITY: "{}"})
    result = koordinator.evaluate(node, spec)
    assert not result.fits
    assert result.reasons[0].message == "node(s) no reservations match reservation affinity"
    other = _web_reservation(node, "a", frozenset({0, 1}), 0)
    assert koordinator.evaluate(node, spec, reservations=(other,)).fits


def test_a_reservation_ignored_pod_takes_what_any_reservation_has_left() -> None:
    node = koord_node(4, 2, used={1: 3000})
    node = replace(
        node, allocations=tuple(replace(a, cpuset=frozenset({4, 5, 6})) for a in node.allocations)
    )
    # r holds cpus 0-3 for app=web and nobody uses it; 4-6 are taken, 7 is free
    held = _web_reservation(node, "r", frozenset({0, 1, 2, 3}), 0, allocate_once=False)
    ignoring = lsr_pod("4", labels={"scheduling.koordinator.sh/reservation-ignored": "true"})
    result = koordinator.allocate(node, ignoring, reservations=(held,))
    assert result.fits and result.cpuset == {0, 1, 2, 3}
    assert "scheduling.koordinator.sh/reservation-allocated" not in result.annotations
    assert not koordinator.allocate(node, lsr_pod("4"), reservations=(held,)).fits
