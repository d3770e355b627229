"""Each rule of a desired node policy, on hand-made nodes (pure), then through the mirror."""

from __future__ import annotations

import dataclasses

import pytest

from tests.factories import (
    ClusterFactory,
    PodAllocationFactory,
    PodFactory,
    hyperthreaded,
)
from tests.factories import koordinator_node as koordinator_mirror_node
from topology.editing.node_policies.validation import (
    DesiredPolicy,
    HeldCPUs,
    IssueSeverity,
    ObservedNode,
    PolicyIssue,
    has_errors,
    validate_node_policy,
)
from topology.models import NodePolicy
from topology.services.policies.node_policies import node_policy_issues, observed_node

# 2 NUMA zones × 4 cores × 2 threads: CPUs 0-15, thread siblings c and c+8.
KOORD = ObservedNode(
    name="koord-1",
    flavour="koordinator",
    cpu_rows=tuple(hyperthreaded(2, 4)),
    capacity_cpus=16,
    held=(HeldCPUs("team/db-0", frozenset({2, 10})), HeldCPUs("team/web-1", frozenset({5}))),
)
CRANE = ObservedNode(name="crane-1", flavour="crane", capacity_cpus=32)
UPSTREAM = ObservedNode(name="plain-1", flavour="upstream-v1alpha2", capacity_cpus=8)


def issues(node: ObservedNode = KOORD, **fields: object) -> list[PolicyIssue]:
    return validate_node_policy(DesiredPolicy(**fields), node)  # type: ignore[arg-type]


def errors(node: ObservedNode = KOORD, **fields: object) -> list[PolicyIssue]:
    return [i for i in issues(node, **fields) if i.severity == IssueSeverity.ERROR]


def warnings(node: ObservedNode = KOORD, **fields: object) -> list[PolicyIssue]:
    return [i for i in issues(node, **fields) if i.severity == IssueSeverity.WARNING]


def test_an_empty_policy_has_no_issue() -> None:
    assert issues() == []


@pytest.mark.parametrize("value", ["", "BestEffort", "Restricted", "SingleNUMANode"])
def test_every_numa_policy_koordinator_recognises_is_accepted(value: str) -> None:
    assert errors(numa_topology_policy=value) == []


@pytest.mark.parametrize("value", ["SingleNUMANodePodLevel", "single-numa-node", "None"])
def test_a_numa_policy_koordinator_does_not_recognise_is_an_error(value: str) -> None:
    (error,) = errors(numa_topology_policy=value)
    assert error.field == "numa_topology_policy"
    assert "SingleNUMANode" in error.message and repr(value) in error.message


def test_the_none_policy_warns_that_koordinator_then_follows_the_nrt() -> None:
    node = dataclasses.replace(KOORD, nrt_numa_policy="Restricted")
    (warning,) = warnings(node, numa_topology_policy="")
    assert "Restricted" in warning.message and "removes the label" in warning.message
    assert warnings(KOORD, numa_topology_policy="") == []


@pytest.mark.parametrize("value", ["MostAllocated", "LeastAllocated"])
def test_the_allocate_strategies_koordinator_names_for_nodes_are_accepted(value: str) -> None:
    assert issues(numa_allocate_strategy=value) == []


def test_distribute_evenly_is_accepted_with_a_warning() -> None:
    (warning,) = issues(numa_allocate_strategy="DistributeEvenly")
    assert warning.severity == "warning" and "LeastAllocated" in warning.message


def test_an_unknown_allocate_strategy_is_an_error() -> None:
    (error,) = errors(numa_allocate_strategy="Packed")
    assert error.field == "numa_allocate_strategy"


@pytest.mark.parametrize("value", ["None", "FullPCPUsOnly", "SpreadByPCPUs"])
def test_the_node_cpu_bind_policies_are_accepted(value: str) -> None:
    assert issues(cpu_bind_policy=value) == []


def test_a_pod_level_bind_policy_is_no_node_bind_policy() -> None:
    (error,) = errors(cpu_bind_policy="FullPCPUs")
    assert error.field == "cpu_bind_policy" and "FullPCPUsOnly" in error.message


def test_a_bind_policy_that_kubelets_full_pcpus_only_overrides_is_a_warning() -> None:
    node = dataclasses.replace(KOORD, kubelet_full_pcpus_only=True)
    (warning,) = warnings(node, cpu_bind_policy="SpreadByPCPUs")
    assert "full-pcpus-only" in warning.message
    assert warnings(node, cpu_bind_policy="FullPCPUsOnly") == []


def test_crane_awareness_on_a_crane_node_is_fine() -> None:
    assert issues(CRANE, crane_topology_awareness=False) == []


@pytest.mark.parametrize("node", [KOORD, UPSTREAM], ids=["koordinator", "upstream"])
def test_crane_awareness_elsewhere_is_a_warning(node: ObservedNode) -> None:
    (warning,) = issues(node, crane_topology_awareness=True)
    assert warning.severity == "warning" and warning.field == "crane_topology_awareness"
    assert "Crane" in warning.message


def test_koordinator_labels_on_a_node_without_koordlet_are_warnings() -> None:
    found = warnings(CRANE, numa_topology_policy="SingleNUMANode", cpu_bind_policy="None")
    assert {w.field for w in found} == {"numa_topology_policy", "cpu_bind_policy"}
    assert all("koordlet" in w.message for w in found)


def test_a_cpulist_and_a_count_together_are_an_error() -> None:
    (error,) = errors(reservation_cpus="0-1", reservation_cpu_count=2)
    assert error.field == "reservation_cpu_count" and "not both" in error.message


def test_reserved_cpus_missing_from_the_node_are_an_error_naming_them() -> None:
    (error,) = errors(reservation_cpus="0-1,16-17,40")
    assert error.field == "reservation_cpus"
    assert "CPUs 16-17,40 are not on node koord-1" in error.message
    assert "0-15" in error.message


def test_without_a_cpu_layout_the_ids_come_from_the_capacity() -> None:
    (error,) = errors(UPSTREAM, reservation_cpus="6-9")
    assert "8-9" in error.message and "assumed" in error.message


def test_a_single_missing_cpu_is_named_in_the_singular() -> None:
    (error,) = errors(reservation_cpus="0,99")
    assert error.message.startswith("CPU 99 is not on node koord-1")


def test_a_malformed_cpulist_is_an_error() -> None:
    (error,) = errors(reservation_cpus="3-1")
    assert error.field == "reservation_cpus"


def test_a_reservation_that_cuts_through_pinned_pods_warns_naming_pods_and_cpus() -> None:
    found = issues(reservation_cpus="0-3")
    assert not has_errors(found)
    (warning,) = found
    assert warning.pods == ("team/db-0",)
    assert "team/db-0 holds 2" in warning.message
    assert "team/web-1" not in warning.message


def test_a_reservation_beside_the_pinned_pods_has_no_warning() -> None:
    assert issues(reservation_cpus="0-1,8-9") == []


def test_a_count_warns_when_koordlets_pick_would_cut_through_pods() -> None:
    # takeByTopology packs whole cores from the lowest: 3 cores = CPUs 0-2 and 8-10.
    (warning,) = issues(reservation_cpu_count=6)
    assert "0-2,8-10" in warning.message
    assert warning.pods == ("team/db-0",) and "holds 2,10" in warning.message


def test_a_count_above_the_nodes_cpus_is_an_error() -> None:
    (error,) = errors(reservation_cpu_count=17)
    assert error.field == "reservation_cpu_count" and "has only 16" in error.message


def test_reserving_every_cpu_is_a_warning() -> None:
    node = dataclasses.replace(KOORD, held=())
    (warning,) = issues(node, reservation_cpu_count=16)
    assert "every CPU" in warning.message


def test_an_apply_policy_alone_needs_a_reservation_on_the_node() -> None:
    (error,) = errors(reservation_apply_policy="ReservedCPUsOnly")
    assert error.field == "reservation_apply_policy"
    reserved = dataclasses.replace(
        KOORD, annotations={"node.koordinator.sh/reservation": '{"reservedCPUs":"0"}'}
    )
    assert issues(reserved, reservation_apply_policy="ReservedCPUsOnly") == []


def test_an_unknown_apply_policy_is_an_error() -> None:
    found = errors(reservation_cpus="0", reservation_apply_policy="Strict")
    assert [e.field for e in found] == ["reservation_apply_policy"]


def test_removing_the_reservation_takes_no_apply_policy() -> None:
    assert issues(reservation_cpu_count=0) == []
    (error,) = errors(reservation_cpu_count=0, reservation_apply_policy="Default")
    assert error.field == "reservation_apply_policy"


@pytest.mark.django_db
def test_the_mirror_gives_the_rules_the_pods_that_hold_cpus() -> None:
    node = koordinator_mirror_node(ClusterFactory(), "koord-1", zones=2, cores_per_zone=4)
    PodAllocationFactory(pod=PodFactory(node=node, name="db-0"), cpuset="2,10")
    PodAllocationFactory(pod=PodFactory(node=node, name="done", phase="Succeeded"), cpuset="3")
    observed = observed_node(node)
    assert observed.flavour == "koordinator" and len(observed.cpu_rows) == 16
    assert [(h.pod, sorted(h.cpus)) for h in observed.held] == [("team/db-0", [2, 10])]
    found = node_policy_issues(NodePolicy(node=node, reservation_cpus="0-3,99"))
    assert [(i.severity, i.field) for i in found] == [("error", "reservation_cpus")]
    found = node_policy_issues(NodePolicy(node=node, reservation_cpus="0-3"))
    assert [(i.severity, i.pods) for i in found] == [("warning", ("team/db-0",))]
