"""The exact merge patch (and diff) a node policy turns into; models built in memory only."""

from __future__ import annotations

import json

from topology.editing.node_policies.patch import node_merge_patch, node_policy_diff
from topology.models import Node, NodePolicy

RESERVATION = "node.koordinator.sh/reservation"
NUMA_POLICY = "node.koordinator.sh/numa-topology-policy"
STRATEGY = "node.koordinator.sh/numa-allocate-strategy"
BIND = "node.koordinator.sh/cpu-bind-policy"
AWARENESS = "topology.crane.io/topology-awareness"


def policy(labels: dict[str, str] | None = None, annotations: dict[str, str] | None = None,
           **fields: object) -> NodePolicy:  # fmt: skip
    node = Node(name="worker-1", labels=labels or {}, annotations=annotations or {})
    return NodePolicy(node=node, **fields)


def test_a_policy_that_sets_nothing_patches_nothing() -> None:
    assert node_merge_patch(policy({NUMA_POLICY: "Restricted"})) == {"metadata": {}}


def test_only_labels_that_change_are_in_the_patch() -> None:
    observed = {NUMA_POLICY: "Restricted", STRATEGY: "MostAllocated", "team": "db"}
    body = node_merge_patch(
        policy(
            observed,
            numa_topology_policy="SingleNUMANode",
            numa_allocate_strategy="MostAllocated",
            cpu_bind_policy="FullPCPUsOnly",
        )
    )
    assert body == {"metadata": {"labels": {NUMA_POLICY: "SingleNUMANode", BIND: "FullPCPUsOnly"}}}


def test_koordinators_none_policy_deletes_the_label() -> None:
    body = node_merge_patch(policy({NUMA_POLICY: "SingleNUMANode"}, numa_topology_policy=""))
    assert body == {"metadata": {"labels": {NUMA_POLICY: None}}}
    assert json.dumps(body) == '{"metadata": {"labels": {"' + NUMA_POLICY + '": null}}}'


def test_the_none_policy_on_a_node_without_the_label_changes_nothing() -> None:
    assert node_merge_patch(policy({}, numa_topology_policy="")) == {"metadata": {}}
    assert node_merge_patch(policy({NUMA_POLICY: ""}, numa_topology_policy="")) == {"metadata": {}}


def test_crane_awareness_is_written_as_go_parse_bool_reads_it() -> None:
    assert node_merge_patch(policy({}, crane_topology_awareness=False)) == {
        "metadata": {"labels": {AWARENESS: "false"}}
    }
    same = policy({AWARENESS: "True"}, crane_topology_awareness=True)
    assert node_merge_patch(same) == {"metadata": {}}
    flipped = policy({AWARENESS: "1"}, crane_topology_awareness=False)
    assert node_merge_patch(flipped) == {"metadata": {"labels": {AWARENESS: "false"}}}


def test_a_cpulist_reservation_is_the_annotation_koordlet_parses() -> None:
    body = node_merge_patch(
        policy(reservation_cpus="3,0-2", reservation_apply_policy="ReservedCPUsOnly")
    )
    assert body == {
        "metadata": {
            "annotations": {RESERVATION: '{"reservedCPUs":"0-3","applyPolicy":"ReservedCPUsOnly"}'}
        }
    }
    assert json.loads(body["metadata"]["annotations"][RESERVATION]) == {
        "reservedCPUs": "0-3",
        "applyPolicy": "ReservedCPUsOnly",
    }


def test_a_count_reservation_replaces_the_cpulist_and_keeps_other_resources() -> None:
    observed = {RESERVATION: '{"resources": {"memory": "2Gi", "cpu": "1"}, "reservedCPUs": "0"}'}
    body = node_merge_patch(policy({}, observed, reservation_cpu_count=2))
    assert body == {
        "metadata": {"annotations": {RESERVATION: '{"resources":{"memory":"2Gi","cpu":"2"}}'}}
    }


def test_a_cpulist_drops_the_cpu_quantity_it_overrides() -> None:
    observed = {RESERVATION: '{"resources":{"cpu":"4"},"applyPolicy":"Default"}'}
    body = node_merge_patch(policy({}, observed, reservation_cpus="0-1"))
    assert body["metadata"]["annotations"][RESERVATION] == (
        '{"reservedCPUs":"0-1","applyPolicy":"Default"}'
    )


def test_an_equivalent_reservation_is_not_rewritten() -> None:
    observed = {RESERVATION: '{"resources": {"cpu": "2000m"}, "applyPolicy": "Default"}'}
    assert node_merge_patch(policy({}, observed, reservation_cpu_count=2)) == {"metadata": {}}
    listed = {RESERVATION: '{"reservedCPUs": "0,1,2,3"}'}
    assert node_merge_patch(policy({}, listed, reservation_cpus="0-3")) == {"metadata": {}}


def test_a_count_of_zero_deletes_the_annotation() -> None:
    observed = {RESERVATION: '{"reservedCPUs":"0-1"}'}
    body = node_merge_patch(policy({}, observed, reservation_cpu_count=0))
    assert body == {"metadata": {"annotations": {RESERVATION: None}}}
    assert node_merge_patch(policy({}, {}, reservation_cpu_count=0)) == {"metadata": {}}


def test_an_apply_policy_alone_keeps_the_reserved_cpus() -> None:
    observed = {RESERVATION: '{"reservedCPUs":"0-1"}'}
    body = node_merge_patch(policy({}, observed, reservation_apply_policy="ReservedCPUsOnly"))
    assert body["metadata"]["annotations"][RESERVATION] == (
        '{"reservedCPUs":"0-1","applyPolicy":"ReservedCPUsOnly"}'
    )


def test_labels_and_annotations_change_in_one_body() -> None:
    body = node_merge_patch(
        policy({"a": "b"}, {}, numa_topology_policy="BestEffort", reservation_cpu_count=1)
    )
    assert body == {
        "metadata": {
            "labels": {NUMA_POLICY: "BestEffort"},
            "annotations": {RESERVATION: '{"resources":{"cpu":"1"}}'},
        }
    }


def test_the_diff_lists_every_field_observed_against_desired() -> None:
    diffs = node_policy_diff(
        policy({NUMA_POLICY: "Restricted", STRATEGY: "MostAllocated"}, numa_topology_policy="")
    )
    by_field = {d.field: d for d in diffs}
    assert [d.field for d in diffs] == [
        "numa_topology_policy",
        "numa_allocate_strategy",
        "cpu_bind_policy",
        "crane_topology_awareness",
        "reservation",
    ]
    numa = by_field["numa_topology_policy"]
    assert (numa.key, numa.observed, numa.desired, numa.changed) == (
        NUMA_POLICY,
        "Restricted",
        None,
        True,
    )
    strategy = by_field["numa_allocate_strategy"]
    assert (strategy.observed, strategy.desired, strategy.managed, strategy.changed) == (
        "MostAllocated",
        "MostAllocated",
        False,
        False,
    )
    assert by_field["reservation"].kind == "annotation"
