"""The data-truth checks (issue 30): each kind found on a small hand-made cluster, and
missed on its near twin. Plain values, no database."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from scheduler_api.engine import (
    AllocationSource,
    ClusterSnapshot,
    ContainerSpec,
    Flavour,
    NodeSnapshot,
    PodAllocation,
    PodSpec,
    ResourceAmounts,
    TopologyManagerPolicy,
    Zone,
)
from topology.choices import FindingKind
from topology.services.diagnosis.facts import ClusterFacts, NRTFacts, PodFacts
from topology.services.diagnosis.findings import (
    KINDS,
    Finding,
    find_all,
    live_pods_by_node,
)

NOW = datetime(2024, 5, 1, 12, 0, tzinfo=UTC)
GI = 1024**3
V2 = Flavour.UPSTREAM_V1ALPHA2
KOORD = Flavour.KOORDINATOR
SNN = {"topologyManagerPolicy": "single-numa-node", "topologyManagerScope": "pod"}

# podfingerprint tracing_test.go (see test_podfingerprint.py): these five pods
# fingerprint to TRACING_SIGN.
TRACING = [("ns1", "n1"), ("ns1", "n2"), ("ns2", "n1"), ("ns3", "n1"), ("ns3", "n2")]
TRACING_SIGN = "pfp0v001b92008c14168b3a6"
# testdata/compat-tiny-3pods-1ns: these three fingerprint to COMPAT_TINY_SIGN.
COMPAT_TINY = [("production", n) for n in ("jaeger-dpgjk", "nginx-rt684", "envoy-g9m22")]
COMPAT_TINY_SIGN = "pfp0v001607b76a0e9d3aeb4"


# --- building blocks ----------------------------------------------------------------------


def zone(numa: int, cpu: tuple[int, int, int] = (8000, 8000, 8000)) -> Zone:
    """A NUMA zone with cpu (capacity, allocatable, available) in millicores."""
    return Zone(numa, f"node-{numa}", {"cpu": ResourceAmounts(*cpu)})


def node(name: str = "w1", flavour: Flavour | None = V2, **fields: Any) -> NodeSnapshot:
    """An upstream single-numa-node node with two empty zones unless told otherwise."""
    fields.setdefault("zones", (zone(0), zone(1)) if flavour else ())
    fields.setdefault("nrt_attributes", SNN if flavour is V2 else {})
    return NodeSnapshot(name, flavour=flavour, **fields)


def spec(namespace: str, name: str, cpu: int = 0, limits: bool = True) -> PodSpec:
    """A pod of `cpu` millicores and 1 GiB: Guaranteed with limits, Burstable without;
    BestEffort for 0."""
    if not cpu:
        return PodSpec(namespace, name, containers=(ContainerSpec("c"),))
    amounts = {"cpu": cpu, "memory": GI}
    container = ContainerSpec("c", amounts, amounts if limits else {})
    return PodSpec(namespace, name, containers=(container,))


def pod(namespace: str, name: str, node_name: str = "w1", **fields: Any) -> PodFacts:
    made = spec(namespace, name, fields.pop("cpu", 0), fields.pop("limits", True))
    fields.setdefault("phase", "Running")
    return PodFacts(
        namespace,
        name,
        f"uid-{name}",
        node_name,
        scheduler_name="s",
        spec_source=made,
        **fields,
    )


def held(
    name: str,
    cpus: set[int],
    source: AllocationSource = AllocationSource.KOORDINATOR,
    **fields: Any,
) -> PodAllocation:
    return PodAllocation("prod", name, f"uid-{name}", source, frozenset(cpus), **fields)


def facts(
    nodes: list[NodeSnapshot],
    pods: list[PodFacts] | None = None,
    nrts: list[NRTFacts] | None = None,
    now: datetime | None = NOW,
) -> ClusterFacts:
    """Facts of `nodes`; each node with an NRT gets NRT facts unless `nrts` is given."""
    if nrts is None:
        nrts = [NRTFacts(n.name, str(n.flavour)) for n in nodes if n.flavour is not None]
    return ClusterFacts(
        snapshot=ClusterSnapshot(nodes=tuple(nodes)),
        pods=tuple(pods or ()),
        nrts=tuple(nrts),
        now=now,
    )


def of_kind(found: list[Finding], kind: str) -> list[Finding]:
    return [f for f in found if f.kind == kind]


def nrt(name: str = "w1", **fields: Any) -> NRTFacts:
    return NRTFacts(name, str(V2), **fields)


# --- the contract ---------------------------------------------------------------------------


def test_the_kinds_are_the_nine_of_the_contract_in_order() -> None:
    assert KINDS == (
        "fingerprint-off-sync",
        "stale-nrt",
        "accounting-mismatch",
        "missing-nrt",
        "orphan-nrt",
        "missing-cpu-topology",
        "filter-admits-all",
        "pool-config-drift",
        "pod-on-reserved-cpus",
    )
    assert set(KINDS) == set(FindingKind.values)  # the dashboard's labels cover them all


def test_a_finding_is_json_with_plain_strings() -> None:
    found = find_all(facts([node("bare", flavour=None)]))
    assert found[0].as_json() == {
        "kind": "missing-nrt",
        "severity": "info",
        "node": "bare",
        "object": None,
        "message": found[0].message,
        "evidence": {"flavour": None},
    }
    assert type(found[0].as_json()["kind"]) is str


def test_a_clean_cluster_has_no_findings() -> None:
    pods = [pod(ns, name) for ns, name in TRACING]
    clean = facts([node()], pods, [nrt(pods_fingerprint=TRACING_SIGN, updated_at=NOW)])
    assert find_all(clean) == []


def test_findings_are_sorted_by_kind_node_and_object_and_serialise() -> None:
    nodes = [node("b", flavour=None), node("a", flavour=None), node("c", nrt_attributes={})]
    found = find_all(facts(nodes, nrts=[nrt("c"), nrt("gone", has_node=False)]))
    keys = [(f.kind, f.node or "", f.object or "") for f in found]
    assert keys == sorted(keys)
    assert [f.kind for f in found] == [
        "filter-admits-all",
        "missing-nrt",
        "missing-nrt",
        "orphan-nrt",
    ]
    json.dumps([f.as_json() for f in found])


def test_live_pods_are_pods_on_without_finished_ones() -> None:
    pods = [
        pod("a", "run"),
        pod("a", "done", phase="Succeeded"),
        pod("a", "refused", phase="Failed", rejected=True),
        pod("a", "elsewhere", node_name="w2"),
        pod("a", "pending", node_name="", phase="Pending"),
    ]
    cluster = facts([node()], pods)
    live = live_pods_by_node(cluster)
    assert [p.name for p in live["w1"]] == [
        p.name for p in cluster.pods_on("w1") if p.phase != "Succeeded"
    ]
    assert [p.name for p in live["w1"]] == ["run"]


# --- 1. fingerprint-off-sync ------------------------------------------------------------------


def fingerprint_findings(pods: list[PodFacts], published: str, method: str = "") -> list[Finding]:
    nrts = [nrt(pods_fingerprint=published, pods_fingerprint_method=method)]
    return of_kind(find_all(facts([node()], pods, nrts)), "fingerprint-off-sync")


def test_the_upstream_vector_is_in_sync_whatever_else_is_on_the_node() -> None:
    pods = [pod(ns, name) for ns, name in TRACING]
    pods += [
        pod("ns9", "finished", phase="Succeeded"),
        pod("ns9", "rejected", phase="Failed", rejected=True),
        pod("ns9", "other-node", node_name="w2"),
    ]
    assert fingerprint_findings(pods, TRACING_SIGN) == []
    assert fingerprint_findings(pods, TRACING_SIGN, method="all") == []


def test_an_extra_pod_puts_the_fingerprint_off_sync() -> None:
    pods = [pod(ns, name) for ns, name in TRACING] + [pod("ns4", "new")]
    (found,) = fingerprint_findings(pods, TRACING_SIGN)
    assert (found.severity, found.node, found.object) == ("error", "w1", "w1")
    assert found.evidence["published"] == TRACING_SIGN
    assert found.evidence["computed"] != TRACING_SIGN
    assert found.evidence["method"] == "all" and found.evidence["pod_count"] == 6
    assert TRACING_SIGN in found.message and "6 pods" in found.message


def test_with_exclusive_resources_counts_only_pods_the_scheduler_counts() -> None:
    pinned = [pod(ns, name, cpu=2000) for ns, name in COMPAT_TINY]
    shared = [pod("production", "web", cpu=4000, limits=False), pod("production", "batch")]
    method = "with-exclusive-resources"
    assert fingerprint_findings(pinned + shared, COMPAT_TINY_SIGN, method) == []
    (found,) = fingerprint_findings(pinned + shared, COMPAT_TINY_SIGN, "all")  # near miss
    assert found.evidence["pod_count"] == 5


def test_an_unknown_method_is_read_as_all_as_the_scheduler_does() -> None:
    pods = [pod(ns, name) for ns, name in TRACING]
    assert fingerprint_findings(pods, TRACING_SIGN, method="foobar") == []


@pytest.mark.parametrize("published", ["pfp0v002e477a4e3b2fc0ec6", "garbage-fingerprint"])
def test_an_unreadable_fingerprint_is_a_warning_that_it_cannot_be_checked(published: str) -> None:
    (found,) = fingerprint_findings([pod("ns1", "n1")], published)
    assert found.severity == "warning"
    assert "cannot be checked" in found.message
    assert found.evidence["published"] == published and "error" in found.evidence


def test_an_nrt_publishing_no_fingerprint_is_not_checked() -> None:
    assert fingerprint_findings([pod("ns1", "n1")], "") == []


# --- 2. stale-nrt ---------------------------------------------------------------------------


def stale_findings(updated_ago: float, created_ago: float | None, **kw: Any) -> list[Finding]:
    created = NOW - timedelta(seconds=created_ago) if created_ago is not None else None
    pods = [
        pod("prod", "old", created_at=NOW - timedelta(hours=5)),
        pod("prod", "db-0", created_at=created),
    ]
    nrts = [nrt(updated_at=NOW - timedelta(seconds=updated_ago))]
    return of_kind(find_all(facts([node()], pods, nrts, **kw), stale_nrt_seconds=600), "stale-nrt")


def test_an_nrt_older_than_the_pods_it_should_show_is_stale() -> None:
    (found,) = stale_findings(updated_ago=3600, created_ago=1200)
    assert (found.severity, found.node, found.object) == ("warning", "w1", "w1")
    assert found.evidence == {
        "updated_at": "2024-05-01T11:00:00+00:00",
        "newest_pod": "prod/db-0",
        "newest_pod_created_at": "2024-05-01T11:40:00+00:00",
        "seconds_behind": 2400.0,
    }
    assert "since 2024-05-01T11:00:00+00:00" in found.message
    assert "prod/db-0" in found.message and "2400 s after" in found.message


def test_an_old_nrt_is_not_stale_when_no_pod_came_after_it() -> None:
    assert stale_findings(updated_ago=3600, created_ago=4000) == []


def test_a_recent_nrt_is_not_stale_even_if_a_pod_came_after_it() -> None:
    assert stale_findings(updated_ago=500, created_ago=100) == []


def test_staleness_is_skipped_when_times_are_unknown() -> None:
    assert stale_findings(updated_ago=3600, created_ago=1200, now=None) == []
    assert stale_findings(updated_ago=3600, created_ago=None) == []


# --- 3. accounting-mismatch ---------------------------------------------------------------


def test_an_nrt_that_misses_pinned_cpus_is_an_accounting_mismatch() -> None:
    # koord-scheduler pinned 4 CPUs of zone 0 (its resource-status numaNodeResources),
    # but the NRT still says zone 0 is all free; zone 1 agrees on 2 CPUs.
    pinned = held("db-0", {0, 1, 2, 3}, numa_resources={0: {"cpu": 4000}})
    spread = held("web-0", {8, 9}, numa_resources={1: {"cpu": 2000}})
    zones = (zone(0, (8000, 8000, 8000)), zone(1, (8000, 8000, 6000)))
    found = of_kind(
        find_all(facts([node(zones=zones, allocations=(pinned, spread))])), "accounting-mismatch"
    )
    (mismatch,) = found
    assert (mismatch.severity, mismatch.node, mismatch.object) == ("warning", "w1", "w1/node-0")
    assert mismatch.evidence == {
        "zone": "node-0",
        "nrt_taken_millicores": 0,
        "known_held_millicores": 4000,
        "allocations": [
            {"pod": "prod/db-0", "source": "koordinator", "cpus": [], "millicores": 4000}
        ],
    }
    assert "0 CPUs" in mismatch.message and "4" in mismatch.message


def test_the_cpu_table_places_a_cpuset_on_its_zones() -> None:
    table = tuple((cpu, cpu, 0, cpu // 4) for cpu in range(8))
    pinned = held("db-0", {2, 3, 4}, source=AllocationSource.KUBELET)
    zones = (zone(0, (4000, 4000, 2000)), zone(1, (4000, 4000, 4000)))
    found = of_kind(
        find_all(facts([node(zones=zones, cpus=table, allocations=(pinned,))])),
        "accounting-mismatch",
    )
    assert [f.object for f in found] == ["w1/node-1"]
    assert found[0].evidence["allocations"][0]["cpus"] == [4]
    assert found[0].evidence["known_held_millicores"] == 1000


def test_less_than_a_whole_cpu_apart_is_not_a_mismatch() -> None:
    pinned = held("db-0", {0, 1}, numa_resources={0: {"cpu": 2000}})
    zones = (zone(0, (8000, 8000, 5500)), zone(1))
    cluster = facts([node(zones=zones, allocations=(pinned,))])
    assert of_kind(find_all(cluster), "accounting-mismatch") == []


def test_a_node_without_known_exclusive_holdings_is_not_compared() -> None:
    # scheduler-plugins nodes: the kubelet pinned CPUs the mirror has no record of.
    shared = PodAllocation(
        "prod", "ls", "u", AllocationSource.KOORDINATOR, numa_resources={0: {"cpu": 500}}
    )
    zones = (zone(0, (8000, 8000, 2000)), zone(1))
    assert (
        of_kind(find_all(facts([node(zones=zones, allocations=(shared,))])), "accounting-mismatch")
        == []
    )


@pytest.mark.parametrize("flavour", [Flavour.KOORDINATOR, Flavour.CRANE])
def test_koordlet_and_crane_zones_are_not_compared(flavour: Flavour) -> None:
    # koordlet publishes available == allocatable; Crane publishes none at all.
    table = tuple((cpu, cpu, 0, cpu // 4) for cpu in range(8))
    pinned = held("db-0", {0, 1, 2}, numa_resources={0: {"cpu": 3000}})
    cluster = facts([node(flavour=flavour, cpus=table, allocations=(pinned,))])
    assert of_kind(find_all(cluster), "accounting-mismatch") == []


# --- 4. missing-nrt, 5. orphan-nrt, 6. missing-cpu-topology ----------------------------------


def test_a_node_without_an_nrt_is_reported_for_information() -> None:
    found = of_kind(find_all(facts([node("bare", flavour=None), node("w1")])), "missing-nrt")
    assert [(f.node, f.severity) for f in found] == [("bare", "info")]


def test_an_nrt_without_a_node_is_an_orphan() -> None:
    nrts = [nrt("w1"), NRTFacts("gone", "", has_node=False)]
    found = of_kind(find_all(facts([node("w1")], nrts=nrts)), "orphan-nrt")
    assert [(f.node, f.object, f.severity) for f in found] == [(None, "gone", "warning")]


def test_a_koordinator_node_without_a_cpu_table_cannot_bind_cpus() -> None:
    table = ((0, 0, 0, 0), (1, 1, 0, 0))
    nodes = [node("bare", flavour=KOORD), node("ok", flavour=KOORD, cpus=table), node("w1")]
    found = of_kind(find_all(facts(nodes)), "missing-cpu-topology")
    assert [(f.node, f.severity) for f in found] == [("bare", "warning")]
    assert "node.koordinator.sh/cpu-topology" in found[0].message


# --- 7. filter-admits-all ------------------------------------------------------------------


def admits_all(**fields: Any) -> list[Finding]:
    return of_kind(find_all(facts([node(**fields)])), "filter-admits-all")


def test_single_numa_node_nrts_are_filtered() -> None:
    assert admits_all() == []
    assert admits_all(nrt_attributes={}, topology_policies=("SingleNUMANodeContainerLevel",)) == []


@pytest.mark.parametrize(
    ("published", "severity"),
    [("none", "info"), ("best-effort", "warning"), ("restricted", "warning")],
)
def test_other_policies_let_every_pod_through(published: str, severity: str) -> None:
    (found,) = admits_all(nrt_attributes={"topologyManagerPolicy": published})
    assert (found.severity, found.node) == (severity, "w1")
    assert found.evidence == {"published_policy": published, "kubelet_policy": published}


def test_a_kubelet_stricter_than_its_nrt_is_a_warning() -> None:
    (found,) = admits_all(nrt_attributes={}, tm_policy=TopologyManagerPolicy.SINGLE_NUMA_NODE)
    assert found.severity == "warning" and "TopologyAffinityError" in found.message
    assert found.evidence == {"published_policy": "none", "kubelet_policy": "single-numa-node"}


def test_only_upstream_nrts_are_judged_by_the_upstream_filter() -> None:
    assert admits_all(flavour=KOORD, cpus=((0, 0, 0, 0),)) == []
    assert admits_all(flavour=None) == []


# --- 8. pool-config-drift ------------------------------------------------------------------

POOL = "node.kubernetes.io/instance-type"


def pooled(name: str, pool: str | None = "m5.metal", **fields: Any) -> NodeSnapshot:
    return node(name, labels={POOL: pool} if pool else {}, **fields)


def test_nodes_of_one_pool_with_different_kubelet_settings_drift() -> None:
    nodes = [
        pooled("a"),
        pooled("b"),
        pooled(
            "c",
            nrt_attributes={"topologyManagerPolicy": "best-effort", "topologyManagerScope": "pod"},
        ),
        pooled("d", pool=None, nrt_attributes={}),  # not in a pool
        pooled("e", pool="c5.large", nrt_attributes={}),  # alone in its pool
    ]
    found = of_kind(find_all(facts(nodes)), "pool-config-drift")
    assert [(f.node, f.object, f.severity) for f in found] == [
        (None, f"{POOL}=m5.metal", "warning")
    ]
    assert found[0].evidence == {
        "tm_policy": {"single-numa-node": ["a", "b"], "best-effort": ["c"]}
    }
    assert "3 nodes" in found[0].message and "best-effort on 1 node" in found[0].message


def test_alike_nodes_of_a_pool_do_not_drift() -> None:
    assert of_kind(find_all(facts([pooled("a"), pooled("b")])), "pool-config-drift") == []


def test_koordlet_published_cpu_manager_settings_are_compared() -> None:
    common = {"flavour": KOORD, "cpus": ((0, 0, 0, 0),), "cpu_manager_policy": "static"}
    nodes = [
        pooled("a", **common, kubelet_reserved_cpus=frozenset({0, 1})),
        pooled("b", **common, kubelet_reserved_cpus=frozenset({0, 1})),
        pooled(
            "c",
            **common,
            cpu_manager_options={"full-pcpus-only": "true"},
            node_reserved_cpus=frozenset({2}),
        ),
    ]
    (found,) = of_kind(find_all(facts(nodes), pool_label=POOL), "pool-config-drift")
    assert found.evidence == {
        "cpu_manager_options": {"(none)": ["a", "b"], "full-pcpus-only=true": ["c"]},
        "kubelet_reserved_cpus": {"0-1": ["a", "b"], "(none)": ["c"]},
        "node_reserved_cpus": {"(none)": ["a", "b"], "2": ["c"]},
    }


def test_a_setting_a_node_does_not_publish_is_not_a_difference() -> None:
    nodes = [pooled("a", cpu_manager_policy="static"), pooled("b")]  # b publishes no CPU manager
    assert of_kind(find_all(facts(nodes)), "pool-config-drift") == []


def test_the_pool_label_is_a_parameter() -> None:
    nodes = [node("a", labels={"pool": "x"}), node("b", labels={"pool": "x"}, nrt_attributes={})]
    assert of_kind(find_all(facts(nodes)), "pool-config-drift") == []
    (found,) = of_kind(find_all(facts(nodes), pool_label="pool"), "pool-config-drift")
    assert found.object == "pool=x"


# --- 9. pod-on-reserved-cpus ---------------------------------------------------------------


def test_a_pod_pinned_to_reserved_cpus_should_be_evicted() -> None:
    allocations = (
        held("db-0", {2, 3, 4}),
        held("db-0", {5}, source=AllocationSource.KUBELET),
        held("web-0", {6, 7}),
    )
    reserved = {
        "node_reserved_cpus": frozenset({0, 1, 2, 3}),
        "kubelet_reserved_cpus": frozenset({5}),
    }
    found = of_kind(
        find_all(facts([node(allocations=allocations, **reserved)])), "pod-on-reserved-cpus"
    )
    assert [(f.node, f.object, f.severity) for f in found] == [("w1", "prod/db-0", "error")]
    assert found[0].evidence == {
        "cpus": [2, 3, 5],
        "reservations": {"node.koordinator.sh/reservation": [2, 3], "kubelet reservedCPUs": [5]},
        "cpuset": [2, 3, 4, 5],
    }
    assert "3 CPUs (2-3,5)" in found[0].message


def test_pods_clear_of_reserved_cpus_are_fine() -> None:
    allocations = (held("web-0", {4, 5}), PodAllocation("prod", "ls", "u", AllocationSource.CRANE))
    cluster = facts([node(allocations=allocations, node_reserved_cpus=frozenset({0, 1}))])
    assert of_kind(find_all(cluster), "pod-on-reserved-cpus") == []


def test_every_check_runs_on_a_cluster_with_everything_wrong() -> None:
    """One node per kind, so `find_all` reports all nine at once."""
    pods = [pod(ns, name, created_at=NOW) for ns, name in TRACING]
    nodes = [
        node(
            "w1",
            allocations=(held("db-0", {0}, numa_resources={0: {"cpu": 1000}}),),
            kubelet_reserved_cpus=frozenset({0}),
        ),
        node("bare", flavour=None),
        node("koord", flavour=KOORD),
        pooled("p1", nrt_attributes={"topologyManagerPolicy": "restricted"}),
        pooled("p2"),
    ]
    nrts = [
        nrt("w1", pods_fingerprint="pfp0v001ef46db3751d8e999", updated_at=NOW - timedelta(hours=1)),
        NRTFacts("gone", "", has_node=False),
    ]
    found = find_all(facts(nodes, pods, nrts))
    assert {f.kind for f in found} == set(KINDS)
