"""Editing desired node policies through the API: roles, validation, diff and preview."""

from __future__ import annotations

import pytest
from rest_framework.test import APIClient

from tests.factories import ClusterFactory, PodAllocationFactory, PodFactory
from tests.policy.mirror import koord_node
from topology.models import Cluster, Node, NodePolicy

from .mixins import ClientFor

pytestmark = pytest.mark.django_db
NUMA_POLICY = "node.koordinator.sh/numa-topology-policy"
RESERVATION = "node.koordinator.sh/reservation"


@pytest.fixture
def lab(db: None) -> Cluster:
    cluster = ClusterFactory(name="lab")
    koord_node(cluster, "koord-a", **{NUMA_POLICY: "Restricted"})
    koord_node(cluster, "koord-b")
    return cluster


def url(node: str = "koord-a", suffix: str = "") -> str:
    return f"/api/v1/clusters/lab/policies/{node}{suffix}"


PREVIEW = "/api/v1/clusters/lab/policies/preview"


@pytest.mark.parametrize("persona", ["operator", "admin"])
def test_operators_and_admins_set_a_policy_with_put_creating_it(
    persona: str, client_for: ClientFor, lab: Cluster
) -> None:
    response = client_for(persona).put(
        url(), {"numa_topology_policy": "SingleNUMANode"}, format="json"
    )
    assert response.status_code == 200, response.content
    body = response.json()
    assert body["node"] == "koord-a" and body["numa_topology_policy"] == "SingleNUMANode"
    assert body["issues"] == []
    assert NodePolicy.objects.get(node__name="koord-a").numa_topology_policy == "SingleNUMANode"


def test_a_viewer_gets_403_and_nothing_changes(client_for: ClientFor, lab: Cluster) -> None:
    NodePolicy.objects.create(node=Node.objects.get(name="koord-a"), cpu_bind_policy="None")
    viewer = client_for("viewer")
    for method in (viewer.put, viewer.patch):
        response = method(url(), {"cpu_bind_policy": "FullPCPUsOnly"}, format="json")
        assert response.status_code == 403
        assert "change_nodepolicy" in response.json()["detail"]
    assert viewer.delete(url()).status_code == 403
    assert NodePolicy.objects.get().cpu_bind_policy == "None"


def test_anonymous_gets_401(client_for: ClientFor, lab: Cluster) -> None:
    response = client_for("anonymous").patch(url(), {"cpu_bind_policy": "None"}, format="json")
    assert response.status_code == 401
    assert not NodePolicy.objects.exists()


def test_patch_changes_only_the_fields_given(operator: APIClient, lab: Cluster) -> None:
    NodePolicy.objects.create(
        node=Node.objects.get(name="koord-a"), cpu_bind_policy="SpreadByPCPUs"
    )
    response = operator.patch(url(), {"numa_allocate_strategy": "MostAllocated"}, format="json")
    assert response.status_code == 200
    policy = NodePolicy.objects.get()
    assert (policy.cpu_bind_policy, policy.numa_allocate_strategy) == (
        "SpreadByPCPUs",
        "MostAllocated",
    )


def test_put_resets_the_fields_it_omits_to_leave_as_observed(
    operator: APIClient, lab: Cluster
) -> None:
    NodePolicy.objects.create(
        node=Node.objects.get(name="koord-a"), cpu_bind_policy="SpreadByPCPUs"
    )
    operator.put(url(), {"numa_allocate_strategy": "MostAllocated"}, format="json")
    assert NodePolicy.objects.get().cpu_bind_policy is None


def test_an_error_is_a_400_naming_the_field_and_nothing_is_saved(
    operator: APIClient, lab: Cluster
) -> None:
    response = operator.put(url(), {"reservation_cpus": "0-3,64"}, format="json")
    assert response.status_code == 400
    errors = response.json()["errors"]
    assert list(errors) == ["reservation_cpus"]
    assert "CPU 64 is not on node koord-a" in errors["reservation_cpus"][0]
    assert not NodePolicy.objects.exists()


def test_a_value_koordinator_does_not_recognise_is_a_400(operator: APIClient, lab: Cluster) -> None:
    response = operator.patch(url(), {"numa_topology_policy": "single-numa-node"}, format="json")
    assert response.status_code == 400 and "numa_topology_policy" in response.json()["errors"]


@pytest.mark.parametrize("field", ["cpu_bind_policy", "numa_allocate_strategy"])
def test_a_blank_where_koordinator_has_none_is_a_400_the_schema_agrees_with(
    operator: APIClient, lab: Cluster, field: str
) -> None:
    """Issue 28: "" was offered by the schema's enum and then refused; now the schema
    offers no blank for these two (null leaves them as observed) and "" stays a 400."""
    response = operator.patch(url(), {field: ""}, format="json")
    assert response.status_code == 400 and set(response.json()["errors"]) == {field}
    assert operator.patch(url(), {field: None}, format="json").status_code == 200


def test_warnings_come_back_with_the_saved_policy(operator: APIClient, lab: Cluster) -> None:
    node = Node.objects.get(name="koord-a")
    PodAllocationFactory(pod=PodFactory(node=node, name="db-0"), cpuset="2,14")
    response = operator.put(url(), {"reservation_cpus": "0-3"}, format="json")
    assert response.status_code == 200
    (issue,) = response.json()["issues"]
    assert issue["severity"] == "warning" and issue["pods"] == ["team/db-0"]
    assert NodePolicy.objects.get().reservation_cpus == "0-3"


def test_an_unknown_node_is_404(operator: APIClient, lab: Cluster) -> None:
    response = operator.put(url("no-such-node"), {}, format="json")
    assert response.status_code == 404


def test_the_diff_shows_observed_desired_the_patch_and_the_issues(
    viewer: APIClient, lab: Cluster
) -> None:
    NodePolicy.objects.create(
        node=Node.objects.get(name="koord-a"),
        numa_topology_policy="SingleNUMANode",
        reservation_cpu_count=2,
    )
    body = viewer.get(url(suffix="/diff")).json()
    assert body["node"] == "koord-a" and body["apply_allowed"] is True
    numa = next(d for d in body["diff"] if d["field"] == "numa_topology_policy")
    assert (numa["observed"], numa["desired"], numa["changed"]) == (
        "Restricted",
        "SingleNUMANode",
        True,
    )
    assert body["patch"] == {
        "metadata": {
            "labels": {NUMA_POLICY: "SingleNUMANode"},
            "annotations": {RESERVATION: '{"resources":{"cpu":"2"}}'},
        }
    }


def test_the_diff_of_a_policy_with_an_error_does_not_allow_an_apply(
    viewer: APIClient, lab: Cluster
) -> None:
    NodePolicy.objects.create(node=Node.objects.get(name="koord-a"), reservation_cpu_count=99)
    body = viewer.get(url(suffix="/diff")).json()
    assert body["apply_allowed"] is False
    assert [i["field"] for i in body["issues"]] == ["reservation_cpu_count"]


def test_the_preview_says_which_nodes_lose_a_reference_pod(
    operator: APIClient, lab: Cluster
) -> None:
    NodePolicy.objects.create(
        node=Node.objects.get(name="koord-b"), numa_topology_policy="SingleNUMANode"
    )
    response = operator.post(PREVIEW, {}, format="json")
    assert response.status_code == 200, response.content
    body = response.json()
    assert body["nodes"] == ["koord-b"]
    big = next(r for r in body["reference_pods"] if r["name"] == "exclusive-16-cpu")
    assert big["lost"] == ["koord-b"] and big["gained"] == []


def test_the_preview_takes_its_own_reference_pods(operator: APIClient, lab: Cluster) -> None:
    NodePolicy.objects.create(node=Node.objects.get(name="koord-a"), reservation_cpu_count=20)
    body = operator.post(
        PREVIEW,
        {"nodes": ["koord-a"], "reference_pods": [{"name": "six", "cpus": 6}]},
        format="json",
    ).json()
    (six,) = body["reference_pods"]
    assert (six["name"], six["source"], six["lost"]) == ("six", "given", ["koord-a"])


def test_the_preview_refuses_a_node_without_a_draft(operator: APIClient, lab: Cluster) -> None:
    response = operator.post(PREVIEW, {"nodes": ["koord-b"]}, format="json")
    assert response.status_code == 400 and "koord-b" in response.json()["errors"]["nodes"][0]


def test_a_viewer_cannot_run_the_preview(viewer: APIClient, lab: Cluster) -> None:
    assert viewer.post(PREVIEW, {}, format="json").status_code == 403


def test_whatif_uses_draft_policies_when_asked(operator: APIClient, lab: Cluster) -> None:
    NodePolicy.objects.create(
        node=Node.objects.get(name="koord-b"), numa_topology_policy="SingleNUMANode"
    )
    question = {
        "containers": [
            {"name": "c", "requests": {"cpu": "16", "memory": "1Gi"},
             "limits": {"cpu": "16", "memory": "1Gi"}}
        ],
        "koordinator_qos_class": "LSR",
    }  # fmt: skip
    plain = operator.post("/api/v1/clusters/lab/whatif", question, format="json").json()
    drafted = operator.post(
        "/api/v1/clusters/lab/whatif", {**question, "use_draft_policies": True}, format="json"
    ).json()
    fits = {n["node"]: n["fits"] for n in plain["nodes"]}
    fits_with_drafts = {n["node"]: n["fits"] for n in drafted["nodes"]}
    assert fits["koord-b"] is True and fits_with_drafts["koord-b"] is False
    assert fits_with_drafts["koord-a"] == fits["koord-a"]


def test_a_background_whatif_keeps_the_draft_flag(operator: APIClient, lab: Cluster) -> None:
    from scheduler_api.models import WhatIfTask
    from scheduler_api.services.whatif import WhatIfQuestion

    question = {"containers": [{"name": "c", "requests": {"cpu": "4"}}], "scheduler": "all"}
    response = operator.post(
        "/api/v1/clusters/lab/whatif", {**question, "use_draft_policies": True}, format="json"
    )
    assert response.status_code == 202
    task = WhatIfTask.objects.get()
    assert task.request["use_draft_policies"] is True
    assert WhatIfQuestion.from_json(task.request).use_draft_policies is True


def test_the_background_task_answers_with_the_drafts_applied(
    operator: APIClient, lab: Cluster
) -> None:
    from scheduler_api.models import WhatIfTask
    from scheduler_api.services.whatif_tasks import whatif_task_run

    NodePolicy.objects.create(
        node=Node.objects.get(name="koord-b"), numa_topology_policy="SingleNUMANode"
    )
    question = {
        "containers": [
            {"name": "c", "requests": {"cpu": "16", "memory": "1Gi"},
             "limits": {"cpu": "16", "memory": "1Gi"}}
        ],
        "koordinator_qos_class": "LSR",
        "scheduler": "all",
        "use_draft_policies": True,
    }  # fmt: skip
    assert operator.post("/api/v1/clusters/lab/whatif", question, format="json").status_code == 202
    task = whatif_task_run(task_id=WhatIfTask.objects.get().pk)
    assert task.state == "succeeded", task.error
    fits = {n["node"]: n["fits"] for n in task.result["koordinator"]["nodes"]}
    assert fits == {"koord-a": True, "koord-b": False}


@pytest.mark.parametrize(("sent", "stored"), [("None", ""), ("", ""), (None, None)])
def test_koordinators_none_policy_stays_apart_from_null(
    operator: APIClient, lab: Cluster, sent: str | None, stored: str | None
) -> None:
    """ "None" (as admin shows it) and "" are Koordinator's None policy; null leaves it."""
    response = operator.put(url(), {"numa_topology_policy": sent}, format="json")
    assert response.status_code == 200, response.json()
    assert NodePolicy.objects.get().numa_topology_policy == stored
    assert response.json()["numa_topology_policy"] == stored
