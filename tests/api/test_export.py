"""clusters/{cluster}/export: the mirror as a Kubernetes List, streamed, like export_snapshot."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest
from django.core.management import call_command
from rest_framework.test import APIClient

from tests.topology.mirror import mirror_state
from topology.models import Cluster

from .factories import NodeFactory
from .mixins import EndpointTests

pytestmark = pytest.mark.django_db


class TestExport(EndpointTests):
    def path(self, cluster: Cluster) -> str:
        return f"/api/v1/clusters/{cluster.name}/export"

    def make_rows(self, cluster: Cluster, count: int) -> None:
        NodeFactory.create_batch(count, cluster=cluster)


def body_of(response: object) -> bytes:
    return b"".join(response.streaming_content)  # type: ignore[attr-defined]


def test_it_streams_what_export_snapshot_writes(
    viewer: APIClient, small_cluster: Cluster, tmp_path: Path
) -> None:
    response = viewer.get("/api/v1/clusters/small/export")
    assert response.status_code == 200
    assert response.streaming and response["Content-Type"] == "application/json"
    written = tmp_path / "snapshot.json"
    call_command("export_snapshot", "--cluster", "small", "-o", str(written), stderr=io.StringIO())
    assert body_of(response).decode() == written.read_text()


def test_an_export_imports_back_into_an_equal_mirror(
    viewer: APIClient, small_cluster: Cluster, tmp_path: Path
) -> None:
    exported = tmp_path / "small.json"
    exported.write_bytes(body_of(viewer.get("/api/v1/clusters/small/export")))
    document = json.loads(exported.read_text())
    assert (document["apiVersion"], document["kind"]) == ("v1", "List")
    call_command("import_objects", "--cluster", "copy", str(exported), stdout=io.StringIO())
    copy = Cluster.objects.get(name="copy")
    assert mirror_state(copy) == mirror_state(small_cluster)


def test_an_empty_cluster_exports_an_empty_list(viewer: APIClient, cluster: Cluster) -> None:
    document = json.loads(body_of(viewer.get("/api/v1/clusters/prod/export")))
    assert document == {"apiVersion": "v1", "kind": "List", "items": []}
