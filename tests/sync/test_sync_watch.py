"""Watches keep the mirror equal to the cluster through every kind of trouble.

Each test runs a list-then-watch session in a background thread (as a worker does),
changes the fake API server, and waits until the mirror matches it field by field.
"""

from __future__ import annotations

import copy
import time

import pytest

from tests.sync.conftest import WatchRun, wait_for
from tests.sync.fakekube import FakeKubeServer
from tests.sync.mirror_check import assert_mirror_matches, versions_match
from topology.choices import SyncResource
from topology.models import Cluster, Node, NodeTopology, Pod, SyncError, SyncState
from topology.sync import lease
from topology.sync.freshness import data_synced_at

# Only the mirror's tables are emptied between tests: much faster than a full flush.
pytestmark = pytest.mark.django_db(transaction=True, available_apps=["topology"])


def listed(cluster: Cluster) -> bool:
    states = SyncState.objects.filter(cluster=cluster, served=True)
    return states.exists() and not states.filter(last_full_list_at__isnull=True).exists()


def settle(server: FakeKubeServer, cluster: Cluster) -> None:
    """Wait until the mirror holds the server's objects at their resourceVersions, then
    compare everything field by field."""
    try:
        wait_for(lambda: versions_match(server, cluster), what="the mirror to catch up")
    finally:
        assert_mirror_matches(server, cluster)


def some(server: FakeKubeServer, plural: str, group: str = "") -> dict:
    return copy.deepcopy(next(iter(server.cluster.objects[(group, plural)].values())))


def relabel(obj: dict, **labels: str) -> dict:
    obj["metadata"].setdefault("labels", {}).update(labels)
    return obj


def test_added_modified_and_deleted_objects_reach_the_mirror(fake, connect, fast):
    cluster = connect(fake)
    with WatchRun(cluster, fast) as run:
        wait_for(lambda: listed(cluster), what="the first list")
        fake.cluster.put(relabel(some(fake, "nodes"), team="blue"))
        new_pod = some(fake, "pods")
        new_pod["metadata"]["name"] = "fresh-pod"
        fake.cluster.put(new_pod)
        fake.cluster.delete(some(fake, "reservations", "scheduling.koordinator.sh"))
        crane = some(fake, "noderesourcetopologies", "topology.crane.io")
        crane["zones"][0]["resources"]["allocatable"]["cpu"] = "3"
        fake.cluster.put(crane)
        settle(fake, cluster)
    assert run.report.counts[SyncResource.PODS]["events"] >= 1
    pods = SyncState.objects.get(cluster=cluster, resource=SyncResource.PODS)
    assert pods.events_applied >= 1 and pods.lag_seconds is not None and pods.lag_seconds < 2


def test_bookmarks_are_skipped_but_move_the_resource_version_and_freshness(fake, connect, fast):
    cluster = connect(fake)
    with WatchRun(cluster, fast):
        wait_for(lambda: listed(cluster), what="the first list")
        first = data_synced_at(cluster)
        node_state = SyncState.objects.get(cluster=cluster, resource=SyncResource.NODES)
        other = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "unrelated"}}
        fake.cluster.put(other)  # moves the server's resourceVersion, not the nodes
        # An earlier bookmark may already have landed: wait for one past the change.
        wait_for(
            lambda: (
                int(SyncState.objects.get(pk=node_state.pk).resource_version)
                > int(node_state.resource_version)
            ),
            what="a bookmark past the unrelated change",
        )
        wait_for(lambda: data_synced_at(cluster) > first, what="freshness to move")
    after = SyncState.objects.get(pk=node_state.pk)
    assert after.last_bookmark_at is not None
    assert after.events_applied == 0  # bookmarks are not events


def test_410_relists_and_loses_no_delete_made_while_the_watch_was_down(fake, connect, fast):
    cluster = connect(fake)
    with WatchRun(cluster, fast):
        wait_for(lambda: listed(cluster), what="the first list")
        fake.faults.watches_fail()
        fake.cut_watches()
        gone = some(fake, "pods")
        fake.cluster.delete(gone)
        fake.cluster.put(relabel(some(fake, "nodes"), during="outage"))
        fake.cluster.compact()  # the history of the outage is lost: watches will get 410
        lists_before = len(fake.requests_matching("GET", "/api/v1/pods"))
        time.sleep(0.2)
        fake.faults.watches_work()
        settle(fake, cluster)
    relists = [r for r in fake.requests_matching("GET", "/api/v1/pods") if not r.is_watch]
    assert len(relists) > lists_before - 1
    assert not Pod.objects.filter(cluster=cluster, name=gone["metadata"]["name"]).exists()


def test_an_expired_watch_relists_even_while_its_stream_is_open(fake, connect, fast):
    cluster = connect(fake)
    with WatchRun(cluster, fast):
        wait_for(lambda: listed(cluster), what="the first list")
        wait_for(lambda: fake.open_watch_count() >= 6, what="every watch to open")
        gone = some(fake, "nodes")
        with fake.cluster.cond:  # delete and compact at once: no watch sees the DELETED
            fake.cluster.delete(gone)
            for group in ("topology.node.k8s.io", "topology.crane.io"):
                nrt = fake.cluster.objects[(group, "noderesourcetopologies")].get(
                    ("", gone["metadata"]["name"])
                )
                if nrt:
                    fake.cluster.delete(nrt)
            fake.cluster.compact()
        settle(fake, cluster)
    assert not Node.objects.filter(cluster=cluster, name=gone["metadata"]["name"]).exists()


def test_a_stream_dropped_mid_way_resumes_from_the_last_resource_version(fake, connect, fast):
    cluster = connect(fake)
    with WatchRun(cluster, fast):
        wait_for(lambda: listed(cluster), what="the first list")
        fake.faults.drop_next_watch(after_events=2, plural="nodes")
        fake.cut_watches()  # the next nodes watch is the one that will be dropped
        wait_for(lambda: fake.open_watch_count() >= 6, what="the watches to come back")
        names = list(fake.cluster.objects[("", "nodes")])[:5]
        versions = []
        for index, key in enumerate(names):
            node = relabel(fake.cluster.get(("", "nodes"), key), step=str(index))
            versions.append(fake.cluster.put(node)["metadata"]["resourceVersion"])
        settle(fake, cluster)
    node_watches = [r for r in fake.requests_matching("GET", "/api/v1/nodes") if r.is_watch]
    assert node_watches[-1].query["resourceVersion"] == versions[1]  # resumed after event 2
    node_lists = [r for r in fake.requests_matching("GET", "/api/v1/nodes") if not r.is_watch]
    assert len(node_lists) == 1  # resumed, not re-listed


def test_a_burst_of_5xx_backs_off_with_a_ceiling_then_recovers(fake, connect, fast):
    cluster = connect(fake)
    with WatchRun(cluster, fast):
        wait_for(lambda: listed(cluster), what="the first list")
        # A watch the server took just before the fault may outlive the cut (its stream
        # not yet registered) and run its full timeout: only later attempts are backoffs.
        faults_from = time.monotonic()
        fake.faults.watches_fail("/pods")
        fake.cut_watches()
        state = SyncState.objects.get(cluster=cluster, resource=SyncResource.PODS)
        wait_for(
            lambda: SyncState.objects.get(pk=state.pk).consecutive_errors >= 6,
            what="repeated failures",
        )
        failing = SyncState.objects.get(pk=state.pk)
        fake.faults.watches_work()
        fake.cluster.put(relabel(some(fake, "pods"), after="burst"))
        settle(fake, cluster)
        wait_for(lambda: SyncState.objects.get(pk=state.pk).consecutive_errors == 0, what="reset")
    assert failing.last_error.startswith("HTTP 503")
    attempts = [
        r.at
        for r in fake.requests_matching("GET", "/api/v1/pods")
        if r.is_watch and r.at >= faults_from
    ]
    gaps = [b - a for a, b in zip(attempts, attempts[1:], strict=False)]
    assert max(gaps[:-1]) <= fast.backoff_ceiling * 1.5  # never beyond the ceiling (+slack)
    assert gaps[1] < gaps[4]  # and growing before it


def test_a_malformed_object_in_a_watch_is_recorded_and_the_rest_synced(fake, connect, fast):
    cluster = connect(fake)
    with WatchRun(cluster, fast):
        wait_for(lambda: listed(cluster), what="the first list")
        pod = some(fake, "pods")
        stored = Pod.objects.get(cluster=cluster, name=pod["metadata"]["name"])
        pod["spec"]["containers"][0]["resources"] = {"limits": {"memory": "a lot"}}
        fake.cluster.put(pod)
        node = relabel(some(fake, "nodes"), fine="yes")
        fake.cluster.put(node)
        name = f"{pod['metadata']['namespace']}/{pod['metadata']['name']}"
        error = wait_for(
            lambda: SyncError.objects.filter(cluster=cluster, object_name=name).first(),
            what="the sync error",
        )
        wait_for(
            lambda: Node.objects.get(cluster=cluster, name=node["metadata"]["name"]).labels.get(
                "fine"
            ),
            what="the good change",
        )
    assert error.field == "spec.containers[0].resources.limits"
    kept = Pod.objects.get(pk=stored.pk)
    assert (kept.resource_version, kept.containers) == (stored.resource_version, stored.containers)


def test_a_pod_that_finishes_leaves_the_mirror(fake, connect, fast):
    cluster = connect(fake)
    with WatchRun(cluster, fast):
        wait_for(lambda: listed(cluster), what="the first list")
        pod = some(fake, "pods")
        pod["status"]["phase"] = "Succeeded"
        fake.cluster.put(pod)
        settle(fake, cluster)
    assert not Pod.objects.filter(cluster=cluster, name=pod["metadata"]["name"]).exists()


def test_a_topology_that_arrives_before_its_node_waits_for_it(fake, connect, fast):
    cluster = connect(fake)
    with WatchRun(cluster, fast):
        wait_for(lambda: listed(cluster), what="the first list")
        nrt = some(fake, "noderesourcetopologies", "topology.crane.io")
        node = copy.deepcopy(fake.cluster.get(("", "nodes"), ("", nrt["metadata"]["name"])))
        for obj in (nrt, node):
            obj["metadata"]["name"] = "late-node"
        fake.cluster.put(nrt)
        time.sleep(0.2)
        fake.cluster.put(node)
        settle(fake, cluster)
    assert NodeTopology.objects.filter(node__cluster=cluster, node__name="late-node").exists()
    assert not SyncError.objects.filter(cluster=cluster).exists()


def test_a_silent_dead_connection_is_cut_by_the_client_read_timeout(fake, connect, fast):
    settings = type(fast)(**{**fast.__dict__, "watch_timeout": 1, "watch_read_margin": 0.3})
    cluster = connect(fake)
    with WatchRun(cluster, settings):
        wait_for(lambda: listed(cluster), what="the first list")
        fake.faults.hang_next_watches(1, plural="nodes")
        fake.cut_watches()
        time.sleep(0.3)
        fake.cluster.put(relabel(some(fake, "nodes"), after="hang"))
        started = time.monotonic()
        settle(fake, cluster)
        assert time.monotonic() - started < 5


def test_two_clusters_sync_at_once(make_fake, demo_items, connect, fast):
    first, second = make_fake(), make_fake(demo_items[: len(demo_items) // 2])
    one, two = connect(first, "one"), connect(second, "two")
    with WatchRun(one, fast), WatchRun(two, fast):
        wait_for(lambda: listed(one) and listed(two), what="both first lists")
        first.cluster.put(relabel(some(first, "nodes"), cluster="one"))
        second.cluster.delete(some(second, "pods"))
        settle(first, one)
        settle(second, two)


def test_a_requested_resync_relists_in_the_live_session(fake, connect, fast):
    cluster = connect(fake)
    assert lease.acquire(cluster.pk, "watch:test", 30)
    with WatchRun(cluster, fast, owner="watch:test"):
        wait_for(lambda: listed(cluster), what="the first list")
        fake.faults.watches_fail("/pods")  # the delete will not arrive as an event
        fake.cut_watches()
        gone = some(fake, "pods")
        fake.cluster.delete(gone)
        lists = len([r for r in fake.requests_matching("GET", "/api/v1/pods") if not r.is_watch])
        assert lease.request_resync(cluster.pk)
        settle(fake, cluster)
        fake.faults.watches_work()
    relists = [r for r in fake.requests_matching("GET", "/api/v1/pods") if not r.is_watch]
    assert len(relists) > lists


def test_a_relist_that_fails_to_decode_is_recorded_and_tried_again(fake, connect, fast):
    cluster = connect(fake)
    with WatchRun(cluster, fast):
        wait_for(lambda: listed(cluster), what="the first list")
        wait_for(lambda: fake.open_watch_count() >= 6, what="every watch to open")
        fake.faults.garble_next_list("/api/v1/nodes")  # a 200 whose body is not JSON
        fake.cluster.compact()  # every watch gets 410 and lists again; the nodes' list fails
        wait_for(
            lambda: (
                "JSONDecodeError"
                in SyncState.objects.get(cluster=cluster, resource=SyncResource.NODES).last_error
            ),
            what="the failed relist recorded",
        )
        gone = some(fake, "nodes")
        fake.cluster.delete(gone)  # the nodes' collection is still watched after the failure
        wait_for(
            lambda: (
                not Node.objects.filter(cluster=cluster, name=gone["metadata"]["name"]).exists()
            ),
            what="the deleted node gone",
        )
