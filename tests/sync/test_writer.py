"""The writer batches and coalesces: many events a transaction, the latest per key wins,
and an unchanged resourceVersion writes nothing."""

from __future__ import annotations

import copy
import time

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from tests.sync.conftest import FAST
from topology.models import Cluster, Node, Pod, SyncState
from topology.services.mirror.importer import import_objects
from topology.sync.messages import WatchEvent
from topology.sync.report import SyncReport
from topology.sync.resources import NODES, PODS
from topology.sync.settings import SyncSettings
from topology.sync.writer import MirrorWriter

pytestmark = pytest.mark.django_db


@pytest.fixture
def cluster(demo_items):
    import_objects(cluster_name="w", objects=copy.deepcopy(demo_items))
    cluster = Cluster.objects.get(name="w")
    for resource in (NODES, PODS):
        SyncState.objects.create(cluster=cluster, resource=resource.sync)
    return cluster


def writer_for(cluster: Cluster, **overrides) -> tuple[MirrorWriter, list]:
    flushed: list = []
    settings = SyncSettings.load(**{**FAST, **overrides})
    writer = MirrorWriter(
        cluster, settings, SyncReport(), on_flush=lambda events, at: flushed.append(events)
    )
    return writer, flushed


def event(resource, kind, obj) -> WatchEvent:
    return WatchEvent(resource, kind, copy.deepcopy(obj), time.time())


def pods_of(items):
    return [i for i in items if i["kind"] == "Pod" and i["status"]["phase"] == "Running"]


@pytest.mark.django_db(transaction=True, available_apps=["topology"])
def test_many_events_are_applied_in_one_transaction(cluster, demo_items, monkeypatch):
    commits = []
    commit = connection.commit

    def counting_commit() -> None:
        commits.append(1)
        commit()

    monkeypatch.setattr(connection, "commit", counting_commit)
    writer, flushed = writer_for(cluster)
    for index, pod in enumerate(pods_of(demo_items)[:30]):
        pod["metadata"]["labels"] = {"batch": "1"}
        pod["metadata"]["resourceVersion"] = str(90_000 + index)
        writer.handle(event(PODS, "MODIFIED", pod))
    commits.clear()
    with CaptureQueriesContext(connection) as queries:
        writer.flush()
    assert len(flushed) == 1 and len(flushed[0]) == 30
    assert Pod.objects.filter(cluster=cluster, labels={"batch": "1"}).count() == 30
    # One transaction holds every event's writes; only the sync state is updated after it.
    assert commits == [1]
    after_commit = [q["sql"] for q in queries.captured_queries][-1]
    assert "topology_syncstate" in after_commit


def test_the_latest_event_per_object_wins(cluster, demo_items):
    writer, flushed = writer_for(cluster)
    node = next(i for i in demo_items if i["kind"] == "Node")
    for step in range(5):
        node["metadata"]["labels"] = {"step": str(step)}
        node["metadata"]["resourceVersion"] = str(80_000 + step)
        writer.handle(event(NODES, "MODIFIED", node))
    writer.flush()
    assert len(flushed[0]) == 1  # coalesced
    stored = Node.objects.get(cluster=cluster, name=node["metadata"]["name"])
    assert stored.labels == {"step": "4"} and stored.resource_version == "80004"


def test_a_delete_after_a_modify_of_the_same_object_removes_it(cluster, demo_items):
    writer, _ = writer_for(cluster)
    pod = pods_of(demo_items)[0]
    writer.handle(
        event(
            PODS, "MODIFIED", {**pod, "metadata": {**pod["metadata"], "resourceVersion": "70000"}}
        )
    )
    writer.handle(event(PODS, "DELETED", pod))
    writer.flush()
    assert not Pod.objects.filter(cluster=cluster, name=pod["metadata"]["name"]).exists()


def test_an_unchanged_resource_version_writes_nothing(cluster, demo_items):
    writer, _ = writer_for(cluster)
    for pod in pods_of(demo_items)[:20]:
        writer.handle(event(PODS, "MODIFIED", pod))  # the versions already stored
    with CaptureQueriesContext(connection) as queries:
        writer.flush()
    writes = [
        q["sql"]
        for q in queries.captured_queries
        if q["sql"].startswith(("INSERT", "UPDATE", "DELETE")) and "syncstate" not in q["sql"]
    ]
    assert writes == []


def test_a_batch_is_flushed_when_full_or_when_its_oldest_event_waited(cluster, demo_items):
    writer, flushed = writer_for(cluster, batch_size=5, flush_interval=0.05)
    for index, pod in enumerate(pods_of(demo_items)[:5]):
        pod["metadata"]["resourceVersion"] = str(60_000 + index)
        writer.handle(event(PODS, "MODIFIED", pod))
    assert len(flushed) == 1  # the fifth event filled the batch
    writer.handle(event(NODES, "MODIFIED", next(i for i in demo_items if i["kind"] == "Node")))
    assert not writer.due()
    time.sleep(0.06)
    assert writer.due()
