"""/metrics on the real database (issue 33): the Prometheus text format, as
`prometheus_client`'s own parser reads it; its series equal the figures the dashboard
shows for the same node; a viewer's API token reads it, anonymous requests get 401."""

from __future__ import annotations

import gzip
import io
import json
import re
from pathlib import Path
from typing import Any

import pytest
from prometheus_client.parser import text_string_to_metric_families
from rest_framework.test import APIClient

from scheduler_api.services.tokens import api_token_create
from topology.demo import generate_demo_objects
from topology.models import Cluster, NodeFigures
from topology.services.diagnosis.refresh import refresh_diagnoses
from topology.services.mirror.figures import recompute_figures
from topology.services.mirror.importer import import_objects
from topology.services.observability.metrics import forget_rendered

pytestmark = pytest.mark.django_db
Samples = dict[tuple[str, tuple[tuple[str, str], ...]], float]


@pytest.fixture
def figured() -> Cluster:
    summary = import_objects(cluster_name="metered", objects=generate_demo_objects(nodes=6))
    assert summary.ok, summary.errors
    cluster = Cluster.objects.get(name="metered")
    recompute_figures(cluster_id=cluster.pk)
    refresh_diagnoses(cluster)
    forget_rendered()
    return cluster


def bearer(user_for: Any, persona: str) -> APIClient:
    client = APIClient()
    issued = api_token_create(user=user_for(persona), name="scrape")
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {issued.plaintext}")
    return client


def samples(body: str) -> Samples:
    found: Samples = {}
    for family in text_string_to_metric_families(body):
        for sample in family.samples:
            found[(sample.name, tuple(sorted(sample.labels.items())))] = sample.value
    return found


def value(found: Samples, name: str, **labels: str) -> float:
    return found[(name, tuple(sorted(labels.items())))]


def test_a_viewer_token_reads_series_equal_to_the_stored_figures(
    figured: Cluster, user_for: Any
) -> None:
    response = bearer(user_for, "viewer").get("/metrics")
    assert response.status_code == 200, response.content
    assert response["Content-Type"].startswith("text/plain; version=")
    found = samples(response.content.decode())
    figures = NodeFigures.objects.filter(node__cluster=figured).select_related("node")
    assert figures.count() == 6
    for row in figures:
        node = {"cluster": "metered", "node": row.node.name}
        assert value(found, "topolens_node_free_exclusive_cpus", **node) == row.free_cpus_total
        for numa, free in row.free_cpus_by_zone.items():
            labels = {**node, "numa_zone": numa}
            assert value(found, "topolens_numa_zone_free_exclusive_cpus", **labels) == free
        for policy, cpus in row.largest_exclusive_pod.items():
            got = value(found, "topolens_node_largest_exclusive_pod_cpus", **node, policy=policy)
            assert got == cpus
        assert value(found, "topolens_node_fragmentation_ratio", **node) == pytest.approx(
            row.fragmentation
        )
    assert value(found, "topolens_cluster_nodes", cluster="metered") == 6


def test_the_zones_resources_are_in_their_units(figured: Cluster, user_for: Any) -> None:
    found = samples(bearer(user_for, "viewer").get("/metrics").content.decode())
    row = NodeFigures.objects.filter(node__cluster=figured).select_related("node").first()
    assert row is not None
    numa, resources = next(iter(row.zone_resources.items()))
    labels = {"cluster": "metered", "node": row.node.name, "numa_zone": numa}
    capacity, allocatable, available = resources["cpu"]
    assert value(found, "topolens_numa_zone_cpu_allocatable_cpus", **labels) == allocatable / 1000
    capacity, allocatable, available = resources["memory"]
    assert (
        value(found, "topolens_numa_zone_memory_capacity_bytes", **labels, resource="memory")
        == capacity
    )


def test_the_cluster_part_names_sync_problems_and_agreement(
    figured: Cluster, user_for: Any
) -> None:
    body = bearer(user_for, "viewer").get("/metrics").content.decode()
    names = {family.name for family in text_string_to_metric_families(body)}
    assert {
        "topolens_cluster_fragmentation_ratio", "topolens_figures_timestamp_seconds",
        "topolens_problem_pods", "topolens_findings", "topolens_agreement_ratio",
        "topolens_whatif_duration_seconds", "topolens_node_nrt_updated_timestamp_seconds",
    } <= names  # fmt: skip


def test_gzip_is_served_when_asked(figured: Cluster, user_for: Any) -> None:
    client = bearer(user_for, "viewer")
    plain = client.get("/metrics").content
    zipped = client.get("/metrics", HTTP_ACCEPT_ENCODING="gzip")
    assert zipped["Content-Encoding"] == "gzip"
    unzipped = gzip.decompress(zipped.content)
    assert samples(unzipped.decode()).keys() == samples(plain.decode()).keys()


@pytest.mark.parametrize(("persona", "status"), [("outsider", 403), ("viewer", 200)])
def test_the_role_of_the_tokens_user_applies(
    figured: Cluster, user_for: Any, persona: str, status: int
) -> None:
    assert bearer(user_for, persona).get("/metrics").status_code == status


def test_anonymous_and_bad_tokens_get_401(figured: Cluster) -> None:
    anonymous = APIClient().get("/metrics")
    assert anonymous.status_code == 401 and anonymous["WWW-Authenticate"].startswith("Bearer")
    bad = APIClient()
    bad.credentials(HTTP_AUTHORIZATION="Bearer tl_not-a-token")
    assert bad.get("/metrics").status_code == 401


GRAFANA = Path(__file__).resolve().parents[2] / "deploy" / "grafana" / "topolens.json"
SUFFIXES = ("", "_bucket", "_count", "_sum", "_total", "_created")


def test_every_grafana_query_names_a_metric_metrics_exports(
    figured: Cluster, user_for: Any
) -> None:
    body = bearer(user_for, "viewer").get("/metrics").content.decode()
    exported = {
        family.name + suffix
        for family in text_string_to_metric_families(body)
        for suffix in SUFFIXES
    }
    dashboard = json.loads(GRAFANA.read_text())
    queries = [t["expr"] for panel in dashboard["panels"] for t in panel["targets"]]
    queries += [v["definition"] for v in dashboard["templating"]["list"] if v["type"] == "query"]
    named = {name for query in queries for name in re.findall(r"topolens_[a-z_]+", query)}
    assert named and named <= exported, named - exported
    titles = {panel["title"] for panel in dashboard["panels"]}
    assert {"Free exclusive CPUs per NUMA zone", "Largest free block", "Fragmentation",
            "NRT data age", "Sync errors and lag"} <= titles  # fmt: skip
    variables = {v["name"] for v in dashboard["templating"]["list"]}
    assert {"cluster", "node"} <= variables


def test_the_metrics_port_serves_metrics_alone_with_the_same_check(
    figured: Cluster, user_for: Any
) -> None:
    """`manage.py serve_metrics`'s app: /metrics with the token check, 404 elsewhere."""
    from django.core import signals
    from django.core.wsgi import get_wsgi_application
    from django.db import close_old_connections

    from topology.management.commands.serve_metrics import metrics_only

    app = metrics_only(get_wsgi_application())
    token = api_token_create(user=user_for("viewer"), name="port").plaintext

    def call(path: str, **headers: str) -> tuple[str, bytes]:
        environ = {
            "REQUEST_METHOD": "GET", "PATH_INFO": path, "SERVER_NAME": "testserver",
            "SERVER_PORT": "9108", "wsgi.input": io.BytesIO(), "wsgi.url_scheme": "http",
            "QUERY_STRING": "", **headers,
        }  # fmt: skip
        statuses: list[str] = []
        body = b"".join(app(environ, lambda status, headers, *_: statuses.append(status)))
        return statuses[0], body

    # as Django's test client does: the test's transaction keeps its connection
    for signal in (signals.request_started, signals.request_finished):
        signal.disconnect(close_old_connections)
    try:
        status, body = call("/metrics", HTTP_AUTHORIZATION=f"Bearer {token}")
        assert status.startswith("200") and b"topolens_node_free_exclusive_cpus" in body
        assert call("/metrics")[0].startswith("401")
        other = call("/api/v1/clusters", HTTP_AUTHORIZATION=f"Bearer {token}")
        assert other[0].startswith("404")
    finally:
        for signal in (signals.request_started, signals.request_finished):
            signal.connect(close_old_connections)


def test_the_figures_task_renders_the_node_part_for_the_next_scrape(
    figured: Cluster, user_for: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """After the figures task, a scrape reads the rendered per-node part from the cache:
    it does not read the figures again (here, reading them would fail)."""
    from topology import tasks
    from topology.services.observability import metrics

    tasks.recompute_figures(figured.pk)
    metrics.forget_rendered()  # as another worker: only Django's cache holds it

    def no_reading(self: Any) -> Any:
        raise AssertionError("the per-node part was rendered again at scrape time")

    monkeypatch.setattr(metrics.NodeFiguresCollector, "collect", no_reading)
    response = bearer(user_for, "viewer").get("/metrics")
    assert response.status_code == 200
    assert b"topolens_numa_zone_free_exclusive_cpus" in response.content
