"""The effect preview: which nodes gain or lose reference pods if the drafts were applied."""

from __future__ import annotations

import pytest

from tests.factories import ClusterFactory
from topology.models import Cluster, NodePolicy, ReferencePod
from topology.services.policies.preview import (
    ReferenceShape,
    preview_policy_effect,
    reference_manifest,
    reference_shapes,
)
from topology.services.whatif.service import run_whatif

from .mirror import crane_node, koord_node

pytestmark = pytest.mark.django_db
NUMA_POLICY = "node.koordinator.sh/numa-topology-policy"


@pytest.fixture
def cluster() -> Cluster:
    return ClusterFactory(name="lab")


def by_name(preview, name):  # noqa: ANN001, ANN201 - a lookup in the answer
    return next(r for r in preview.references if r.shape.name == name)


def test_a_single_numa_node_draft_loses_the_16_cpu_pod_but_keeps_the_small_ones(
    cluster: Cluster,
) -> None:
    node = koord_node(cluster, "koord-a")  # 2 zones × 12 CPUs
    koord_node(cluster, "koord-b")  # no draft: not judged
    draft = NodePolicy(node=node, numa_topology_policy="SingleNUMANode")
    preview = preview_policy_effect(cluster=cluster, policies=[draft])
    assert preview.nodes == ("koord-a",)
    assert [r.shape.name for r in preview.references] == [
        "exclusive-4-cpu",
        "exclusive-8-cpu",
        "exclusive-16-cpu",
    ]
    big = by_name(preview, "exclusive-16-cpu")
    assert big.lost == ["koord-a"] and big.gained == []
    (effect,) = big.nodes
    assert (effect.capacity_before, effect.capacity_after) == (1, 0)
    assert effect.reasons_after and not effect.reasons_before
    eight = by_name(preview, "exclusive-8-cpu")
    assert eight.lost == [] and eight.gained == []
    (effect,) = eight.nodes
    assert effect.capacity_before == 3 and effect.capacity_after == 2  # one per 12-CPU zone


def test_dropping_a_single_numa_node_label_gains_the_16_cpu_pod(cluster: Cluster) -> None:
    node = koord_node(cluster, "koord-a", **{NUMA_POLICY: "SingleNUMANode"})
    preview = preview_policy_effect(
        cluster=cluster, policies=[NodePolicy(node=node, numa_topology_policy="")]
    )
    assert by_name(preview, "exclusive-16-cpu").gained == ["koord-a"]


def test_a_reservation_by_count_takes_cpus_away_from_exclusive_pods(cluster: Cluster) -> None:
    node = koord_node(cluster, "koord-a")
    preview = preview_policy_effect(
        cluster=cluster, policies=[NodePolicy(node=node, reservation_cpu_count=12)]
    )
    assert by_name(preview, "exclusive-16-cpu").lost == ["koord-a"]
    (effect,) = by_name(preview, "exclusive-4-cpu").nodes
    assert (effect.capacity_before, effect.capacity_after) == (6, 3)


def test_crane_awareness_makes_a_crane_node_keep_a_pod_in_one_zone(cluster: Cluster) -> None:
    node = crane_node(cluster, "crane-a", aware=False)  # 2 zones × 16 CPUs
    wide = ReferenceShape("wide", reference_manifest(name="wide", cpus=24), 24)
    preview = preview_policy_effect(
        cluster=cluster,
        policies=[NodePolicy(node=node, crane_topology_awareness=True)],
        reference_pods=[wide],
    )
    assert preview.references[0].lost == ["crane-a"]


def test_a_draft_equal_to_the_node_changes_nothing_and_is_not_judged(cluster: Cluster) -> None:
    node = koord_node(cluster, "koord-a", **{NUMA_POLICY: "SingleNUMANode"})
    preview = preview_policy_effect(
        cluster=cluster, policies=[NodePolicy(node=node, numa_topology_policy="SingleNUMANode")]
    )
    assert preview.nodes == () and preview.unchanged == ("koord-a",)
    assert all(r.nodes == () for r in preview.references)


def test_saved_policies_are_previewed_by_default(cluster: Cluster) -> None:
    node = koord_node(cluster, "koord-a")
    NodePolicy.objects.create(node=node, numa_topology_policy="SingleNUMANode")
    preview = preview_policy_effect(cluster=cluster)
    assert by_name(preview, "exclusive-16-cpu").lost == ["koord-a"]
    assert preview.as_json()["reference_pods"][2]["lost"] == ["koord-a"]


def test_saved_reference_pods_replace_the_defaults_per_cluster(cluster: Cluster) -> None:
    other = ClusterFactory(name="elsewhere")
    ReferencePod.objects.create(cluster=cluster, name="db", cpus=12)
    ReferencePod.objects.create(cluster=None, name="tiny", cpus=2)
    ReferencePod.objects.create(cluster=other, name="theirs", cpus=6)
    assert [s.name for s in reference_shapes(cluster)] == ["tiny", "db"]
    assert [s.source for s in reference_shapes(cluster)] == ["saved", "saved"]
    assert [s.name for s in reference_shapes(ClusterFactory(name="empty"))] == ["tiny"]
    ReferencePod.objects.all().delete()
    assert [(s.name, s.cpus, s.source) for s in reference_shapes(cluster)] == [
        ("exclusive-4-cpu", 4, "default"),
        ("exclusive-8-cpu", 8, "default"),
        ("exclusive-16-cpu", 16, "default"),
    ]


def test_the_preview_writes_nothing(cluster: Cluster) -> None:
    node = koord_node(cluster, "koord-a")
    preview_policy_effect(
        cluster=cluster, policies=[NodePolicy(node=node, numa_topology_policy="SingleNUMANode")]
    )
    node.refresh_from_db()
    assert NUMA_POLICY not in node.labels and not NodePolicy.objects.exists()


def test_whatif_with_draft_policies_sees_the_node_as_if_they_were_applied(
    cluster: Cluster,
) -> None:
    node = koord_node(cluster, "koord-a")
    NodePolicy.objects.create(node=node, numa_topology_policy="SingleNUMANode")
    pod = reference_manifest(name="big", cpus=16)
    observed = run_whatif(cluster=cluster, pod=pod)
    drafted = run_whatif(cluster=cluster, pod=pod, use_draft_policies=True)
    assert observed["nodes"][0]["fits"] is True
    assert drafted["nodes"][0]["fits"] is False
    assert drafted["nodes"][0]["reasons"]
