"""clusters/{cluster}/policies: desired node policies, read (editing: test_policies_edit)."""

from __future__ import annotations

import pytest
from rest_framework.test import APIClient

from scheduler_api.api.serializers.policies import NodePolicySerializer
from tests.factories import NodePolicyFactory
from topology.models import Cluster, NodePolicy

from .factories import NodeFactory
from .mixins import ClientFor, EndpointTests, ListEndpointTests

pytestmark = pytest.mark.django_db
POLICIES = "/api/v1/clusters/prod/policies"


class TestPolicyList(ListEndpointTests):
    max_queries = 7

    def path(self, cluster: Cluster) -> str:
        return f"/api/v1/clusters/{cluster.name}/policies"

    def make_rows(self, cluster: Cluster, count: int) -> None:
        NodePolicyFactory.create_batch(count, node__cluster=cluster)


class TestPolicyDetail(EndpointTests):
    def path(self, cluster: Cluster) -> str:
        return f"/api/v1/clusters/{cluster.name}/policies/worker-1"

    def make_rows(self, cluster: Cluster, count: int) -> None:
        NodePolicyFactory(node=NodeFactory(cluster=cluster, name="worker-1"))


def test_a_policy_keeps_null_apart_from_none(viewer: APIClient, cluster: Cluster) -> None:
    NodePolicyFactory(
        node=NodeFactory(cluster=cluster, name="a"), numa_topology_policy="", cpu_bind_policy=None
    )
    body = viewer.get(f"{POLICIES}/a").json()
    assert body["numa_topology_policy"] == ""  # Koordinator's None policy
    assert body["cpu_bind_policy"] is None  # leave as observed


def test_policies_filter_by_node(viewer: APIClient, cluster: Cluster) -> None:
    NodePolicyFactory(node=NodeFactory(cluster=cluster, name="a"))
    NodePolicyFactory(node=NodeFactory(cluster=cluster, name="b"))
    assert [p["node"] for p in viewer.get(POLICIES, {"node": "b"}).json()["results"]] == ["b"]


def test_a_viewer_cannot_edit_policies_through_the_api(
    client_for: ClientFor, cluster: Cluster
) -> None:
    """Operators and admins may (tests/api/test_policies_edit.py); a viewer may not."""
    NodePolicyFactory(node=NodeFactory(cluster=cluster, name="a"), cpu_bind_policy="FullPCPUs")
    client = client_for("viewer")
    response = client.patch(f"{POLICIES}/a", {"cpu_bind_policy": "None"}, format="json")
    assert response.status_code == 403
    assert NodePolicy.objects.get().cpu_bind_policy == "FullPCPUs"


def test_the_serializer_is_ready_for_editing(cluster: Cluster) -> None:
    policy = NodePolicyFactory(node=NodeFactory(cluster=cluster, name="a"))
    canonical = NodePolicySerializer(policy, data={"reservation_cpus": "3,0-2"}, partial=True)
    assert canonical.is_valid(), canonical.errors
    assert canonical.validated_data["reservation_cpus"] == "0-3"
    bad = NodePolicySerializer(policy, data={"reservation_cpus": "3-1"}, partial=True)
    assert not bad.is_valid() and "reservation_cpus" in bad.errors
    both = NodePolicySerializer(
        policy, data={"reservation_cpus": "0-1", "reservation_cpu_count": 2}, partial=True
    )
    assert not both.is_valid() and "reservation_cpu_count" in both.errors
    wrong = NodePolicySerializer(policy, data={"cpu_bind_policy": "Sideways"}, partial=True)
    assert not wrong.is_valid() and "cpu_bind_policy" in wrong.errors


def test_a_node_without_a_draft_answers_its_starting_point(
    viewer: APIClient, cluster: Cluster
) -> None:
    """Issue 27: `GET policies/{node}` was a 404 for a node without a draft."""
    NodeFactory(cluster=cluster, name="bare")
    response = viewer.get(f"{POLICIES}/bare")
    assert response.status_code == 200
    body = response.json()
    assert body["draft"] is False and body["node"] == "bare"
    assert all(body[field] in (None, "") for field in NodePolicy.FIELDS)
    assert viewer.get(f"{POLICIES}/no-such-node").status_code == 404
