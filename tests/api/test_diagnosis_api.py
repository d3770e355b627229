"""Diagnoses and findings on the real database (issue 30 §2–§4): the refresh stores them,
the API serves them to the viewer role with their filters, one pod's diagnosis stays
current with the mirror, and `manage.py diagnose --cluster` prints the same."""

from __future__ import annotations

import json
from io import StringIO
from typing import Any

import pytest
from django.core.management import call_command
from rest_framework.test import APIClient

from topology.models import Cluster, Finding, Pod, PodDiagnosis
from topology.services.diagnosis.refresh import refresh_diagnoses
from topology.services.mirror.importer import import_objects

from ..topology.diagnosis_objects import node, nrt, pod, split_cluster

pytestmark = pytest.mark.django_db
BASE = "/api/v1/clusters/split"


@pytest.fixture
def split() -> Cluster:
    objects = [*split_cluster(), node("n3", cpu=4), pod("running", "2", node_name="n2")]
    summary = import_objects(cluster_name="split", objects=objects)
    assert summary.ok, summary.errors
    cluster = Cluster.objects.get(name="split")
    refresh_diagnoses(cluster)
    return cluster


def test_the_refresh_stores_a_diagnosis_per_pending_or_rejected_pod(split: Cluster) -> None:
    rows = {(d.namespace, d.name): d for d in PodDiagnosis.objects.filter(cluster=split)}
    assert set(rows) == {("prod", "waiting"), ("prod", "refused")}
    refused = rows[("prod", "refused")]
    assert refused.state == "rejected" and refused.node_name == "n1"
    assert refused.reason == "TopologyAffinityError"
    assert refused.body["admission"]["blocking"] == ["cpu"]
    assert rows[("prod", "waiting")].body["events"][0]["count"] == 5
    split.refresh_from_db()
    assert split.diagnosed_version == split.mirror_version
    kinds = set(Finding.objects.filter(cluster=split).values_list("kind", flat=True))
    assert "missing-nrt" in kinds  # n3 has no NRT


def test_a_second_refresh_replaces_the_rows(split: Cluster) -> None:
    Pod.objects.filter(cluster=split, name="waiting").delete()
    refresh_diagnoses(split)
    names = set(PodDiagnosis.objects.filter(cluster=split).values_list("name", flat=True))
    assert names == {"refused"}


@pytest.mark.parametrize(
    ("persona", "status"),
    [("anonymous", 401), ("outsider", 403), ("viewer", 200), ("operator", 200), ("admin", 200)],
)
def test_the_viewer_role_reads_diagnoses_and_findings(
    split: Cluster, client_for: Any, persona: str, status: int
) -> None:
    client: APIClient = client_for(persona)
    for path in ("diagnoses", "findings", "pods/prod/waiting/diagnosis"):
        assert client.get(f"{BASE}/{path}").status_code == status, path


def test_diagnoses_filter_by_namespace_node_and_reason(split: Cluster, viewer: APIClient) -> None:
    def names(query: str) -> list[str]:
        body = viewer.get(f"{BASE}/diagnoses?{query}").json()
        return [d["name"] for d in body["results"]]

    assert names("") == ["refused", "waiting"]
    assert names("node=n1") == ["refused"]
    assert names("reason=Unschedulable") == ["waiting"]
    assert names("namespace=other") == []
    first = viewer.get(f"{BASE}/diagnoses?state=pending").json()["results"][0]
    assert first["nearest"][0]["alignment"] is True and "computed_at" in first


def test_findings_filter_by_kind_severity_and_node(split: Cluster, viewer: APIClient) -> None:
    found = viewer.get(f"{BASE}/findings?kind=missing-nrt").json()["results"]
    assert [(f["kind"], f["node"]) for f in found] == [("missing-nrt", "n3")]
    assert set(found[0]) == {"kind", "severity", "node", "object", "message", "evidence",
                             "computed_at"}  # fmt: skip
    assert viewer.get(f"{BASE}/findings?kind=nonsense").status_code == 400
    assert viewer.get(f"{BASE}/findings?node=n1&severity=info").json()["results"] == []


def test_one_pods_diagnosis_follows_the_mirror(split: Cluster, viewer: APIClient) -> None:
    stored = viewer.get(f"{BASE}/pods/prod/waiting/diagnosis").json()
    assert stored["fits_now"] == 0 and stored["mirror_version"] == split.mirror_version
    # the NRT frees a zone: the mirror moves on, the stored diagnosis is not current
    assert import_objects(cluster_name="split", objects=[nrt("n2", (8, 8)), node("n4")]).ok
    assert import_objects(cluster_name="split", objects=[node("n4"), nrt("n4", (8, 8))]).ok
    live = viewer.get(f"{BASE}/pods/prod/waiting/diagnosis").json()
    assert live["mirror_version"] > stored["mirror_version"]
    assert live["fits_now"] == 0  # 10 CPUs still fit no 8-CPU zone
    assert "n4" in {m["node"] for m in live["nearest"]}


def test_a_pod_that_needs_no_diagnosis_is_a_404_saying_why(
    split: Cluster, viewer: APIClient
) -> None:
    running = viewer.get(f"{BASE}/pods/prod/running/diagnosis")
    assert running.status_code == 404
    assert "only Pending pods" in running.json()["detail"]
    assert viewer.get(f"{BASE}/pods/prod/nobody/diagnosis").status_code == 404


def test_the_command_reads_the_mirror_too(split: Cluster) -> None:
    out = StringIO()
    call_command("diagnose", "--cluster", "split", stdout=out)
    report = json.loads(out.getvalue())
    assert set(report) == {"data_age_seconds", "pods", "findings"}
    assert [p["name"] for p in report["pods"]] == ["refused", "waiting"]
    pod_keys = {
        "namespace", "name", "state", "scheduler", "fits_now", "refusals", "nearest",
        "alignment_only", "admission", "stale_data",
    }  # fmt: skip
    assert pod_keys <= set(report["pods"][0])
    out = StringIO()
    call_command("diagnose", "--cluster", "split", "--pod", "prod/waiting", stdout=out)
    assert [p["name"] for p in json.loads(out.getvalue())["pods"]] == ["waiting"]


def test_the_problems_page_says_where_a_pending_pod_fits_now(split: Cluster, client: Any) -> None:
    from django.contrib.auth.models import Group, User

    objects = [node("n5", cpu=32), nrt("n5", (16, 16)), pod("fits", "4")]
    assert import_objects(cluster_name="split", objects=objects).ok
    refresh_diagnoses(split)
    user = User.objects.create_user("looker")
    user.groups.add(Group.objects.get(name="viewer"))
    client.force_login(user)
    page = client.get("/c/split/problems/").content.decode()
    assert "fits now, best on" in page
    detail = client.get("/c/split/pods/prod/fits/diagnosis/").content.decode()
    assert "would bind and be admitted there now" in detail


def test_the_node_page_lists_the_pods_diagnosed_against_it(split: Cluster, client: Any) -> None:
    from django.contrib.auth.models import Group, User

    user = User.objects.create_user("node-looker")
    user.groups.add(Group.objects.get(name="viewer"))
    client.force_login(user)
    n1 = client.get("/c/split/nodes/n1/").content.decode()
    assert "prod/refused</a>: rejected here" in n1  # bound there
    assert "prod/waiting</a>: Pending, this node is one of its nearest misses" in n1
    n3 = client.get("/c/split/nodes/n3/").content.decode()
    assert "prod/refused" not in n3


def test_the_problems_page_shows_the_first_findings_of_a_kind_and_says_how_many(
    split: Cluster, client: Any
) -> None:
    from django.contrib.auth.models import Group, User

    from topology.selectors.problems import FINDINGS_SHOWN

    objects = [node(f"bare-{index:03d}", cpu=4) for index in range(FINDINGS_SHOWN + 5)]
    assert import_objects(cluster_name="split", objects=objects).ok
    refresh_diagnoses(split)
    missing = Finding.objects.filter(cluster=split, kind="missing-nrt").count()
    assert missing > FINDINGS_SHOWN
    user = User.objects.create_user("many-looker")
    user.groups.add(Group.objects.get(name="viewer"))
    client.force_login(user)
    page = client.get("/c/split/problems/").content.decode()
    assert f"The first {FINDINGS_SHOWN} of {missing} are shown" in page
    assert page.count("publishes no NodeResourceTopology") <= FINDINGS_SHOWN + 1
    assert "/api/v1/clusters/split/findings?kind=missing-nrt" in page
