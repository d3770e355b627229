"""A list's pages written by page writers (threads with connections of their own): the
mirror ends equal to the cluster, results are taken in page order, events wait for the
pages before them, and a row the database refuses still costs one sync error."""

from __future__ import annotations

import copy
import threading
import time

import pytest
from django.db import connection

from tests.sync.conftest import FAST, sync_once
from tests.sync.mirror_check import assert_mirror_matches
from topology.choices import SyncResource
from topology.models import Pod, SyncError
from topology.sync import writer as writer_module
from topology.sync.messages import ListDone, ListPage, WatchEvent
from topology.sync.page_writers import PageWriters
from topology.sync.report import SyncReport
from topology.sync.resources import NODES, PODS
from topology.sync.settings import SyncSettings
from topology.sync.writer import MirrorWriter

postgresql_only = pytest.mark.skipif(
    connection.vendor != "postgresql", reason="page writers write on PostgreSQL only"
)
in_parallel = pytest.mark.django_db(transaction=True, available_apps=["topology"])


@pytest.fixture
def writer_threads(monkeypatch) -> list[str]:
    """The names of the threads that wrote list pages."""
    names: list[str] = []
    write_page = MirrorWriter._write_page

    def spy(self, *args):
        names.append(threading.current_thread().name)
        return write_page(self, *args)

    monkeypatch.setattr(MirrorWriter, "_write_page", spy)
    return names


def small_pages(writers: int = 2) -> SyncSettings:
    return SyncSettings.load(**{**FAST, "page_size": 4, "list_page_writers": writers})


@postgresql_only
@in_parallel
def test_pages_written_in_parallel_leave_the_mirror_equal_to_the_cluster(
    fake, connect, writer_threads, monkeypatch
):
    started: list[int] = []

    class Counted(PageWriters):
        def __init__(self, count: int) -> None:
            started.append(count)
            super().__init__(count)

    monkeypatch.setattr(writer_module, "PageWriters", Counted)
    cluster = connect(fake)
    report = sync_once(cluster, small_pages())
    assert report.total("errors") == 0
    assert_mirror_matches(fake, cluster)
    assert len(writer_threads) > 20
    assert all(name.startswith("sync-page-writer-") for name in writer_threads)
    assert started and set(started) == {2}  # one pair of writers for each list
    serial = sync_once(connect(fake, "serial"), small_pages(writers=1))
    assert report.counts == serial.counts

    pods = fake.cluster.served("", "pods")
    changed = copy.deepcopy(pods[0])
    changed["metadata"]["labels"] = {**(changed["metadata"].get("labels") or {}), "x": "y"}
    fake.cluster.put(changed)
    fake.cluster.delete(pods[1])
    again = sync_once(cluster, small_pages())
    assert again.counts[SyncResource.PODS]["written"] == 1
    assert again.counts[SyncResource.PODS]["removed"] == 1
    assert_mirror_matches(fake, cluster)


@postgresql_only
@in_parallel
def test_a_pod_the_database_refuses_costs_one_error_and_the_page_is_written(fake, connect):
    pods = fake.cluster.served("", "pods")
    too_long = copy.deepcopy(pods[0])
    too_long["metadata"]["name"] = "p" * 300  # the column holds 253 characters
    fake.cluster.put(too_long)
    cluster = connect(fake)
    report = sync_once(cluster, small_pages())
    errors = SyncError.objects.filter(cluster=cluster, resource=SyncResource.PODS)
    assert [e.object_name for e in errors] == [f"{too_long['metadata']['namespace']}/{'p' * 300}"]
    assert report.total("errors") == 1
    assert_mirror_matches(fake, cluster, ignore={("Pod", too_long["metadata"]["name"])})


@postgresql_only
@in_parallel
def test_an_event_after_a_page_waits_for_the_page(fake, connect, writer_threads):
    """A DELETED event for a pod of a page still being written must find it written."""
    cluster = connect(fake)
    sync_once(cluster, small_pages())
    pod = next(p for p in fake.cluster.served("", "pods") if p["status"]["phase"] == "Running")
    Pod.objects.filter(cluster=cluster, name=pod["metadata"]["name"]).delete()
    writer_threads.clear()
    writer = MirrorWriter(cluster, small_pages(), SyncReport())
    writer.begin_list(PODS)
    writer.handle(ListPage(PODS, [copy.deepcopy(pod)], False, time.time()))
    writer.handle(WatchEvent(PODS, "DELETED", copy.deepcopy(pod), time.time()))
    writer.flush()
    writer.handle(ListDone(PODS, "1", time.time()))
    writer.finish()
    assert writer_threads and writer_threads[0].startswith("sync-page-writer-")
    assert not Pod.objects.filter(cluster=cluster, name=pod["metadata"]["name"]).exists()


@pytest.mark.django_db
def test_inside_a_transaction_pages_are_written_in_the_writers_own_thread(
    fake, connect, writer_threads
):
    """Other connections could not see what an open transaction wrote (a test's, here)."""
    cluster = connect(fake)
    sync_once(cluster, small_pages())
    assert writer_threads and set(writer_threads) == {threading.current_thread().name}
    assert_mirror_matches(fake, cluster)


@postgresql_only
@in_parallel
def test_a_session_that_fails_mid_list_leaves_no_page_writer_behind(fake, connect, monkeypatch):
    cluster = connect(fake)
    write_page = MirrorWriter._write_page
    calls = []

    def fail_on_the_fifth(self, resource, page, listing):
        calls.append(page)
        if len(calls) == 5:
            raise ConnectionError("the database went away")
        return write_page(self, resource, page, listing)

    monkeypatch.setattr(MirrorWriter, "_write_page", fail_on_the_fifth)
    with pytest.raises(ConnectionError):
        sync_once(cluster, small_pages())
    assert len(calls) >= 5
    alive = [t.name for t in threading.enumerate() if t.name.startswith("sync-page-writer-")]
    assert alive == []


@postgresql_only
@in_parallel
def test_a_restarted_list_sees_the_pages_written_before_it_restarted(
    fake, connect, writer_threads, caplog
):
    """A list restarted (its `continue` token expired) reads the mirror again: after the
    pages in flight are written, so it finds them and does not insert them twice."""
    cluster = connect(fake)
    pods = [p for p in fake.cluster.served("", "pods") if p["status"]["phase"] == "Running"]
    writer = MirrorWriter(cluster, small_pages(), SyncReport())
    writer.begin_list(NODES)
    writer.handle(ListPage(NODES, fake.cluster.served("", "nodes"), False, time.time()))
    writer.handle(ListDone(NODES, "1", time.time()))
    writer.begin_list(PODS)
    writer.handle(ListPage(PODS, copy.deepcopy(pods[:6]), False, time.time()))
    writer.handle(ListPage(PODS, copy.deepcopy(pods), True, time.time()))
    writer.handle(ListDone(PODS, "2", time.time()))
    writer.finish()
    assert "a batch failed" not in caplog.text
    assert all(name.startswith("sync-page-writer-") for name in writer_threads)
    assert Pod.objects.filter(cluster=cluster).count() == len(pods)
    assert not SyncError.objects.filter(cluster=cluster).exists()
