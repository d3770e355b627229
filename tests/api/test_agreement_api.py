"""The agreement audit on the real database (issue 32): the refresh after a sync stores
each running pod's verdict and the rates, the API serves them to the viewer role with
their filters, and `manage.py audit --cluster` prints the same verdicts."""

from __future__ import annotations

import json
from io import StringIO
from typing import Any

import pytest
from django.core.management import call_command
from rest_framework.test import APIClient

from topology.demo import generate_demo_objects
from topology.models import AgreementSample, Cluster, Pod, PodAgreement
from topology.services.diagnosis.refresh import refresh_diagnoses
from topology.services.mirror.importer import import_objects

pytestmark = pytest.mark.django_db
BASE = "/api/v1/clusters/audited"


@pytest.fixture
def audited() -> Cluster:
    summary = import_objects(cluster_name="audited", objects=generate_demo_objects(nodes=8))
    assert summary.ok, summary.errors
    cluster = Cluster.objects.get(name="audited")
    refresh_diagnoses(cluster)
    return cluster


def test_the_refresh_stores_each_running_pods_verdict_and_the_rates(audited: Cluster) -> None:
    rows = PodAgreement.objects.filter(cluster=audited)
    running = Pod.objects.filter(cluster=audited, phase="Running").exclude(node_name="")
    assert rows.count() == running.count() > 0
    verdicts = set(rows.values_list("verdict", flat=True))
    assert verdicts <= {"agree", "differs", "not-judgeable"} and "agree" in verdicts
    (sample,) = AgreementSample.objects.filter(cluster=audited)
    assert (
        sample.rates["koordinator"]["agree"]
        == rows.filter(system="koordinator", verdict="agree").count()
    )


def test_a_pod_gone_from_the_mirror_leaves_the_audit(audited: Cluster) -> None:
    row = PodAgreement.objects.filter(cluster=audited, verdict="agree").first()
    assert row is not None
    Pod.objects.filter(cluster=audited, namespace=row.namespace, name=row.name).delete()
    refresh_diagnoses(audited)
    assert not PodAgreement.objects.filter(pk=row.pk).exists()
    assert AgreementSample.objects.filter(cluster=audited).count() == 2


@pytest.mark.parametrize(
    ("persona", "status"),
    [("anonymous", 401), ("outsider", 403), ("viewer", 200), ("operator", 200), ("admin", 200)],
)
def test_the_viewer_role_reads_the_audit(
    audited: Cluster, client_for: Any, persona: str, status: int
) -> None:
    client: APIClient = client_for(persona)
    for path in ("agreement", "agreement/pods"):
        assert client.get(f"{BASE}/{path}").status_code == status, path


def test_the_rates_and_their_history(audited: Cluster, viewer: APIClient) -> None:
    body = viewer.get(f"{BASE}/agreement").json()
    assert body["rates"]["crane"]["judged"] > 0
    assert [point["rates"] for point in body["history"]] == [body["rates"]]
    assert "approximation" in body["approximation"] and body["computed_at"]


def test_the_pods_filter_by_verdict_system_and_node(audited: Cluster, viewer: APIClient) -> None:
    def pods(query: str) -> list[dict[str, Any]]:
        return viewer.get(f"{BASE}/agreement/pods?page_size=500&{query}").json()["results"]

    agree = pods("verdict=agree&system=crane")
    assert agree and all(p["verdict"] == "agree" and p["system"] == "crane" for p in agree)
    node = agree[0]["node"]
    assert {p["node"] for p in pods(f"node={node}")} == {node}
    assert viewer.get(f"{BASE}/agreement/pods?verdict=maybe").status_code == 400


def test_the_cli_on_the_mirror_prints_the_stored_verdicts(audited: Cluster) -> None:
    out = StringIO()
    call_command("audit", "--cluster", "audited", stdout=out)
    printed = {(p["namespace"], p["name"]): p for p in json.loads(out.getvalue())["pods"]}
    stored = {(r.namespace, r.name): r.body for r in PodAgreement.objects.filter(cluster=audited)}
    assert printed == stored
