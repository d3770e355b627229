"""The fast paths of a resync: a page whose objects all have their stored versions costs
no query, a changed object among many is found and written alone, and the shortcuts (the
list's view of the mirror, records parsed ahead) never decide what is written."""

from __future__ import annotations

import copy
import time

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from tests.sync.conftest import FAST, sync_once
from tests.sync.mirror_check import assert_mirror_matches
from topology.adapters.fingerprints import node_fingerprints
from topology.choices import SyncResource
from topology.models import Node, Pod, SyncError
from topology.parsers import MirroredKind, parse_object
from topology.services.mirror.hashing import encode_record, version_digest
from topology.services.mirror.removal import remove_objects
from topology.sync import apply
from topology.sync.ahead import Parsed, parse_ahead
from topology.sync.messages import ListDone, ListPage
from topology.sync.report import SyncReport
from topology.sync.resources import PODS
from topology.sync.settings import SyncSettings
from topology.sync.writer import MirrorWriter

pytestmark = pytest.mark.django_db
MIRROR_TABLES = ("topology_node", "topology_nodetopology", "topology_pod", "topology_reservation")


def test_a_no_change_resync_reads_each_collection_once_and_writes_nothing(fake, connect):
    tiny_pages = SyncSettings.load(**{**FAST, "page_size": 3})
    cluster = connect(fake)
    first = sync_once(cluster, tiny_pages)
    requests_before = len(fake.requests)
    with CaptureQueriesContext(connection) as queries:
        report = sync_once(cluster, tiny_pages)
    pages = [r for r in fake.requests[requests_before:] if "limit" in r.query]
    mirror_reads = [
        q["sql"]
        for q in queries.captured_queries
        if q["sql"].startswith("SELECT") and any(f'"{t}"' in q["sql"] for t in MIRROR_TABLES)
    ]
    # One read of what the mirror holds per collection, however many pages it took.
    assert len(pages) > len(first.versions) + 3
    assert len(mirror_reads) <= len(first.versions)
    assert not [q for q in queries.captured_queries if q["sql"].startswith(("INSERT", "DELETE"))]
    assert report.total("written") == report.total("removed") == 0


def test_one_changed_pod_among_many_is_found_and_written_alone(fake, connect, fast):
    cluster = connect(fake)
    sync_once(cluster, fast)
    pod = copy.deepcopy(next(iter(fake.cluster.objects[("", "pods")].values())))
    pod["metadata"]["labels"] = {**(pod["metadata"].get("labels") or {}), "changed": "yes"}
    fake.cluster.put(pod)
    report = sync_once(cluster, fast)
    assert report.counts[SyncResource.PODS]["written"] == 1
    assert report.total("written") == 1
    stored = Pod.objects.get(cluster=cluster, name=pod["metadata"]["name"])
    assert stored.labels["changed"] == "yes"
    assert_mirror_matches(fake, cluster)


@pytest.mark.skipif(connection.vendor != "postgresql", reason="fingerprints need PostgreSQL")
def test_a_changed_pod_changes_its_digest_and_its_nodes_fingerprint(fake, connect, fast):
    cluster = connect(fake)
    sync_once(cluster, fast)
    pod = _a_running_pod(fake)
    node = pod["spec"]["nodeName"]
    before = node_fingerprints(cluster)
    pod["metadata"]["labels"] = {"changed": "yes"}
    served = fake.cluster.put(pod)
    sync_once(cluster, fast)
    stored = Pod.objects.get(cluster=cluster, name=pod["metadata"]["name"])
    version = served["metadata"]["resourceVersion"]
    assert stored.content_hash == version_digest(stored.uid, version)
    after = node_fingerprints(cluster)
    assert after[node] != before[node]
    assert {n: f for n, f in after.items() if n != node} == {
        n: f for n, f in before.items() if n != node
    }


def _writer_with_list_begun(cluster, fast):
    writer = MirrorWriter(cluster, fast, SyncReport())
    return writer, writer.begin_list(PODS)


def _a_running_pod(fake) -> dict:
    pods = fake.cluster.served("", "pods")
    return copy.deepcopy(next(p for p in pods if p["status"]["phase"] == "Running"))


def test_a_list_whose_view_wrongly_says_a_pod_is_new_still_updates_it(fake, connect, fast):
    cluster = connect(fake)
    sync_once(cluster, fast)
    writer, stored = _writer_with_list_begun(cluster, fast)
    pod = _a_running_pod(fake)
    key = (pod["metadata"]["namespace"], pod["metadata"]["name"])
    del stored[key]  # a stale view: the mirror holds the pod, the view says it does not
    pod["metadata"]["resourceVersion"] = "999999"
    pod["metadata"]["labels"] = {"seen": "again"}
    writer.handle(ListPage(PODS, [pod], True, time.time()))
    # The insert the hint led to failed on the unique key; the retry, which trusts the
    # database, updated the pod in place.
    row = Pod.objects.get(cluster=cluster, namespace=key[0], name=key[1])
    assert (row.resource_version, row.labels) == ("999999", {"seen": "again"})
    assert Pod.objects.filter(cluster=cluster, namespace=key[0], name=key[1]).count() == 1
    assert not SyncError.objects.filter(cluster=cluster).exists()


def test_a_record_parsed_ahead_for_an_unchanged_object_is_not_written(fake, connect, fast):
    cluster = connect(fake)
    sync_once(cluster, fast)
    writer, _ = _writer_with_list_begun(cluster, fast)
    pod = _a_running_pod(fake)
    key = (pod["metadata"]["namespace"], pod["metadata"]["name"])
    altered = copy.deepcopy(pod)
    altered["metadata"]["labels"] = {"parsed": "ahead"}
    record = parse_object(altered).record
    parsed = {key: Parsed(record, encode_record(record))}
    writer.handle(ListPage(PODS, [pod], True, time.time(), parsed=parsed))
    assert Pod.objects.get(cluster=cluster, namespace=key[0], name=key[1]).labels != {
        "parsed": "ahead"
    }


def test_the_writer_uses_records_parsed_ahead_instead_of_parsing_again(
    fake, connect, fast, monkeypatch
):
    cluster = connect(fake)
    sync_once(cluster, fast)
    writer, stored = _writer_with_list_begun(cluster, fast)
    pod = _a_running_pod(fake)
    pod["metadata"]["resourceVersion"] = "888888"
    parsed = parse_ahead(MirroredKind.POD, [pod], stored)

    def parse_one_not_expected(*args, **kwargs):
        raise AssertionError("parsed again")

    monkeypatch.setattr(apply, "parse_one", parse_one_not_expected)
    writer.handle(ListPage(PODS, [pod], True, time.time(), parsed=parsed))
    name = pod["metadata"]["name"]
    assert Pod.objects.get(cluster=cluster, name=name).resource_version == "888888"


def test_parsing_ahead_skips_stored_versions_and_keeps_errors_for_the_writer():
    pods = [
        {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"name": name, "namespace": "ns", "resourceVersion": rv},
            "spec": {"containers": containers},
        }
        for name, rv, containers in (
            ("same", "5", [{"name": "c"}]),
            ("newer", "7", [{"name": "c"}]),
            ("broken", "9", []),
        )
    ]
    parsed = parse_ahead(MirroredKind.POD, pods, {("ns", "same"): "5", ("ns", "newer"): "6"})
    assert set(parsed) == {("ns", "newer"), ("ns", "broken")}
    assert parsed[("ns", "newer")].record.resource_version == "7"
    assert parsed[("ns", "newer")].encoded.digest == version_digest("", "7")
    assert "at least one container" in parsed[("ns", "broken")].error.message


def test_a_list_that_fails_before_its_first_page_leaves_no_stale_view(fake, connect, fast):
    cluster = connect(fake)
    sync_once(cluster, fast)
    writer, stored = _writer_with_list_begun(cluster, fast)
    writer.abandon_list(PODS)
    gone = _a_running_pod(fake)
    Pod.objects.filter(cluster=cluster, name=gone["metadata"]["name"]).delete()
    # The next list reads the mirror again: the pod deleted since is not "stored".
    writer.handle(ListPage(PODS, [gone], True, time.time()))
    writer.handle(ListDone(PODS, "1", time.time()))
    assert Pod.objects.filter(cluster=cluster, name=gone["metadata"]["name"]).exists()
    assert len(stored) > 1


def _pods_deleted_from_the_mirror(fake, cluster) -> list[dict]:
    """Running pods the server holds and the mirror no longer does (a list writes them anew)."""
    pods = [copy.deepcopy(p) for p in fake.cluster.served("", "pods")]
    running = [p for p in pods if p["status"]["phase"] == "Running" and p["spec"].get("nodeName")]
    keys = [(p["metadata"]["namespace"], p["metadata"]["name"]) for p in running]
    assert remove_objects(cluster, MirroredKind.POD, keys) == len(keys)
    return running


def test_a_pod_list_reads_the_nodes_ids_once_not_once_a_page(fake, connect, fast):
    cluster = connect(fake)
    sync_once(cluster, fast)
    pods = _pods_deleted_from_the_mirror(fake, cluster)
    assert len(pods) >= 2
    writer, _ = _writer_with_list_begun(cluster, fast)
    with CaptureQueriesContext(connection) as queries:
        for pod in pods:
            writer.handle(ListPage(PODS, [pod], False, time.time()))
    assert not [q for q in queries.captured_queries if 'FROM "topology_node"' in q["sql"]]
    for pod in pods:
        row = Pod.objects.get(cluster=cluster, name=pod["metadata"]["name"])
        assert row.node_id == Node.objects.get(cluster=cluster, name=row.node_name).pk
    assert_mirror_matches(fake, cluster)


def test_a_node_missing_from_the_lists_node_ids_is_looked_up(fake, connect, fast):
    cluster = connect(fake)
    sync_once(cluster, fast)
    pod = _pods_deleted_from_the_mirror(fake, cluster)[0]
    writer, _ = _writer_with_list_begun(cluster, fast)
    writer._listings[SyncResource.PODS].node_ids.clear()  # noqa: SLF001 - as if read too early
    writer.handle(ListPage(PODS, [pod], False, time.time()))
    row = Pod.objects.get(cluster=cluster, name=pod["metadata"]["name"])
    assert row.node_id == Node.objects.get(cluster=cluster, name=row.node_name).pk


@pytest.mark.django_db(transaction=True)
def test_a_stale_node_id_fails_the_page_and_the_retry_links_the_right_node(fake, connect, fast):
    # Transactional: the foreign key is checked when the page's transaction commits.
    cluster = connect(fake)
    sync_once(cluster, fast)
    pod = _pods_deleted_from_the_mirror(fake, cluster)[0]
    writer, _ = _writer_with_list_begun(cluster, fast)
    node_ids = writer._listings[SyncResource.PODS].node_ids  # noqa: SLF001
    stale = max(Node.objects.values_list("pk", flat=True)) + 1000  # a Node deleted since
    node_ids[pod["spec"]["nodeName"]] = stale
    writer.handle(ListPage(PODS, [pod], False, time.time()))
    writer.finish()  # a page writer may still hold the page (transactional: in parallel)
    row = Pod.objects.get(cluster=cluster, name=pod["metadata"]["name"])
    assert row.node_id == Node.objects.get(cluster=cluster, name=row.node_name).pk != stale
    assert not SyncError.objects.filter(cluster=cluster).exists()
