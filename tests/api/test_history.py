"""The figures over time (issue 33) on the real database: each figures run adds a
cluster sample and the nodes' hourly samples (downsampled: one row per node and hour),
housekeeping prunes them past the retention, and the API serves them at a step, as JSON
or CSV, to the viewer role."""

from __future__ import annotations

import csv
import io
from datetime import timedelta
from typing import Any

import pytest
from django.utils import timezone
from rest_framework.test import APIClient

from scheduler_api.engine import cluster_fragmentation, fragmentation
from topology.demo import generate_demo_objects
from topology.models import Cluster, ClusterFigureSample, NodeFigures, NodeFigureSample
from topology.services.mirror.figures import recompute_figures
from topology.services.mirror.importer import import_objects
from topology.services.observability.history import prune_history

pytestmark = pytest.mark.django_db
BASE = "/api/v1/clusters/dated"


@pytest.fixture
def dated() -> Cluster:
    summary = import_objects(cluster_name="dated", objects=generate_demo_objects(nodes=5))
    assert summary.ok, summary.errors
    return Cluster.objects.get(name="dated")


def test_each_figures_run_adds_a_cluster_sample_and_one_node_row_per_hour(dated: Cluster) -> None:
    recompute_figures(cluster_id=dated.pk)
    recompute_figures(cluster_id=dated.pk)
    samples = ClusterFigureSample.objects.filter(cluster=dated)
    assert samples.count() == 2
    assert NodeFigureSample.objects.filter(node__cluster=dated).count() == 5  # same hour
    last = samples.last()
    figures = list(NodeFigures.objects.filter(node__cluster=dated))
    assert last.free_cpus_total == sum(f.free_cpus_total for f in figures)
    assert last.largest_free_block == max(f.max_free_cpus_in_one_zone for f in figures)
    assert last.fragmentation == pytest.approx(
        cluster_fragmentation((f.max_free_cpus_in_one_zone, f.free_cpus_total) for f in figures)
    )
    for row in figures:
        assert row.fragmentation == pytest.approx(
            fragmentation({int(k): v for k, v in row.free_cpus_by_zone.items()})
        )


def test_housekeeping_prunes_past_the_retention(dated: Cluster, settings: Any) -> None:
    recompute_figures(cluster_id=dated.pk)
    settings.TOPOLENS_HISTORY_DAYS = 14
    assert prune_history(timezone.now() + timedelta(days=13)) == 0
    assert prune_history(timezone.now() + timedelta(days=15)) == 6  # 1 cluster + 5 nodes
    assert not ClusterFigureSample.objects.exists() and not NodeFigureSample.objects.exists()


def seed(cluster: Cluster, hours: int) -> None:
    now = timezone.now()
    ClusterFigureSample.objects.bulk_create(
        ClusterFigureSample(
            cluster=cluster,
            taken_at=now - timedelta(minutes=5 * i),
            nodes=5,
            zones=20,
            free_cpus_total=100 + i,
            largest_free_block=10,
            fragmentation=0.5,
            largest_pod_by_policy={"single-numa-node": 10, "none": 100},
        )  # fmt: skip
        for i in range(hours * 12)
    )


def test_the_api_answers_at_the_step_asked(dated: Cluster, viewer: APIClient) -> None:
    seed(dated, hours=6)
    body = viewer.get(f"{BASE}/history?step=3600").json()
    assert body["step_seconds"] == 3600 and body["retention_days"] == 14
    assert 6 <= len(body["samples"]) <= 7
    times = [s["taken_at"] for s in body["samples"]]
    assert times == sorted(times)
    fine = viewer.get(f"{BASE}/history").json()
    assert len(fine["samples"]) == 72 and fine["step_seconds"] >= 300


def client_for_anonymous() -> APIClient:
    return APIClient()


def test_a_range_and_a_step_out_of_bounds_are_400(dated: Cluster, viewer: APIClient) -> None:
    assert viewer.get(f"{BASE}/history?step=10").status_code == 400
    now = timezone.now().isoformat().replace("+00:00", "Z")
    response = viewer.get(f"{BASE}/history", {"from": now, "to": "2020-01-01T00:00:00Z"})
    assert response.status_code == 400 and "from" in response.json()["errors"]
    bad = viewer.get(f"{BASE}/history?format=xml")
    assert bad.status_code == 400 and "format" in bad.json()["errors"]
    refused = client_for_anonymous().get(f"{BASE}/history?format=csv")
    assert refused.status_code == 401 and refused["Content-Type"] == "application/json"


def test_the_csv_has_a_row_per_sample(dated: Cluster, viewer: APIClient) -> None:
    seed(dated, hours=1)
    response = viewer.get(f"{BASE}/history?format=csv")
    assert response.status_code == 200 and response["Content-Type"].startswith("text/csv")
    rows = list(csv.DictReader(io.StringIO(response.content.decode())))
    assert len(rows) == 12 and rows[-1]["free_cpus_total"] == "100"
    assert rows[-1]["largest_pod_single-numa-node"] == "10"


@pytest.mark.parametrize(("persona", "status"), [("anonymous", 401), ("outsider", 403)])
def test_refused_without_the_viewer_role(
    dated: Cluster, client_for: Any, persona: str, status: int
) -> None:
    assert client_for(persona).get(f"{BASE}/history").status_code == status
