"""A full list of every collection through the real client, reconciled into the mirror."""

from __future__ import annotations

import copy

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from tests.sync.conftest import sync_once
from tests.sync.mirror_check import assert_mirror_matches
from topology.choices import SyncResource
from topology.models import Node, NodeTopology, Pod, SyncError, SyncState
from topology.sync.errors import SyncConnectError

pytestmark = pytest.mark.django_db


def test_the_first_sync_mirrors_every_kind_the_server_holds(fake, connect, fast):
    cluster = connect(fake)
    report = sync_once(cluster, fast)
    assert report.ok, report.as_dict()
    assert_mirror_matches(fake, cluster)
    kinds = {t.api_version for t in NodeTopology.objects.filter(node__cluster=cluster)}
    assert kinds == {"topology.node.k8s.io/v1alpha2", "topology.crane.io/v1alpha1"}
    assert report.counts[SyncResource.PODS]["listed"] == Pod.objects.filter(cluster=cluster).count()
    # 20 objects a page: the pods took several pages, all listed from one snapshot.
    pages = fake.requests_matching("GET", "/api/v1/pods")
    assert len(pages) > 2 and all(r.query["limit"] == "20" for r in pages)


def test_each_group_is_read_once_at_its_preferred_version(fake, connect, fast):
    sync_once(connect(fake), fast)
    paths = {r.path for r in fake.requests}
    assert "/apis/topology.node.k8s.io/v1alpha2/noderesourcetopologies" in paths
    assert "/apis/topology.node.k8s.io/v1alpha1/noderesourcetopologies" not in paths
    state = SyncState.objects.get(resource=SyncResource.NRT_UPSTREAM)
    assert state.api_version == "topology.node.k8s.io/v1alpha2"


def test_a_koordinator_cluster_serving_only_v1alpha1_keeps_koordlet_detail(
    make_fake, demo_items, connect, fast
):
    koordlet_nrts = [
        i
        for i in demo_items
        if i["kind"] != "NodeResourceTopology" or i["apiVersion"].endswith("v1alpha1")
    ]
    server = make_fake(
        koordlet_nrts,
        groups={"topology.node.k8s.io": ("v1alpha1",), "scheduling.koordinator.sh": ("v1alpha1",)},
    )
    cluster = connect(server)
    report = sync_once(cluster, fast)
    flavours = set(
        NodeTopology.objects.filter(node__cluster=cluster).values_list("flavour", flat=True)
    )
    assert "koordinator" in flavours and "upstream-v1alpha2" not in flavours
    assert NodeTopology.objects.filter(node__cluster=cluster, cpu_count__gt=0).exists()
    assert SyncResource.NRT_CRANE in report.not_served
    assert_mirror_matches(server, cluster)


def test_a_kind_the_cluster_does_not_serve_is_skipped_and_reported(
    make_fake, demo_items, connect, fast
):
    server = make_fake(demo_items, groups={"topology.crane.io": ("v1alpha1",)})
    cluster = connect(server)
    report = sync_once(cluster, fast)
    assert report.ok
    assert (
        "group topology.node.k8s.io is not served" in report.not_served[SyncResource.NRT_UPSTREAM]
    )
    assert SyncResource.RESERVATIONS in report.not_served
    skipped = SyncState.objects.get(cluster=cluster, resource=SyncResource.RESERVATIONS)
    assert not skipped.served and skipped.consecutive_errors == 0
    assert any("not served" in line for line in report.lines())
    assert_mirror_matches(server, cluster)


def test_an_unchanged_resync_writes_nothing(fake, connect, fast):
    cluster = connect(fake)
    sync_once(cluster, fast)
    stamps = dict(Node.objects.filter(cluster=cluster).values_list("name", "observed_at"))
    with CaptureQueriesContext(connection) as queries:
        report = sync_once(cluster, fast)
    mirror_writes = [
        q["sql"]
        for q in queries.captured_queries
        if q["sql"].startswith(("INSERT", "UPDATE", "DELETE"))
        and "topology_syncstate" not in q["sql"]
    ]
    assert mirror_writes == []
    assert report.total("written") == report.total("removed") == 0
    assert dict(Node.objects.filter(cluster=cluster).values_list("name", "observed_at")) == stamps


def test_objects_gone_since_the_last_sync_are_removed_on_resync(fake, connect, fast):
    cluster = connect(fake)
    sync_once(cluster, fast)
    node = next(iter(fake.cluster.objects[("", "nodes")].values()))
    fake.cluster.delete(node)
    for group in ("topology.node.k8s.io", "topology.crane.io"):  # garbage-collected with it
        nrt = fake.cluster.objects[(group, "noderesourcetopologies")].get(
            ("", node["metadata"]["name"])
        )
        if nrt:
            fake.cluster.delete(nrt)
    pod = next(iter(fake.cluster.objects[("", "pods")].values()))
    fake.cluster.delete(pod)
    report = sync_once(cluster, fast)
    assert report.counts[SyncResource.NODES]["removed"] == 1
    assert report.counts[SyncResource.PODS]["removed"] == 1
    assert_mirror_matches(fake, cluster)


def test_a_malformed_object_is_recorded_and_the_rest_synced(fake, connect, fast):
    cluster = connect(fake)
    pods = fake.cluster.objects[("", "pods")]
    bad = copy.deepcopy(next(p for p in pods.values() if p["spec"]["containers"]))
    bad["metadata"]["name"] = "bad-quantity"
    bad["spec"]["containers"][0]["resources"] = {"requests": {"cpu": "lots"}}
    fake.cluster.put(bad)
    report = sync_once(cluster, fast)
    error = SyncError.objects.get(cluster=cluster)
    assert error.object_name == f"{bad['metadata']['namespace']}/bad-quantity"
    assert error.field == "spec.containers[0].resources.requests" and "lots" in error.message
    assert report.counts[SyncResource.PODS]["errors"] == 1 and not report.ok
    assert_mirror_matches(fake, cluster, ignore={("Pod", "bad-quantity")})
    fixed = fake.cluster.get(("", "pods"), (bad["metadata"]["namespace"], "bad-quantity"))
    fixed["spec"]["containers"][0]["resources"] = {"requests": {"cpu": "1"}}
    fake.cluster.put(fixed)
    sync_once(cluster, fast)
    assert not SyncError.objects.filter(cluster=cluster).exists()
    assert_mirror_matches(fake, cluster)


def test_a_malformed_update_keeps_the_stored_version_whole(fake, connect, fast):
    cluster = connect(fake)
    sync_once(cluster, fast)
    nrts = fake.cluster.objects[("topology.crane.io", "noderesourcetopologies")]
    name = next(iter(nrts))[1]
    before = NodeTopology.objects.get(node__cluster=cluster, node__name=name)
    broken = copy.deepcopy(nrts[("", name)])
    broken["zones"][0]["resources"]["capacity"]["cpu"] = "many"
    fake.cluster.put(broken)
    report = sync_once(cluster, fast)
    after = NodeTopology.objects.get(node__cluster=cluster, node__name=name)
    assert (after.resource_version, after.raw) == (before.resource_version, before.raw)
    assert report.counts[SyncResource.NRT_CRANE]["errors"] == 1
    assert report.counts[SyncResource.NRT_CRANE]["removed"] == 0


def test_an_expired_continue_token_restarts_the_list(fake, connect, fast):
    cluster = connect(fake)
    original = fake.cluster.sorted_keys

    def compact_once_mid_list(cid):  # the server compacts between two pages
        if (
            cid == ("", "pods")
            and fake.cluster.compactions == 0
            and len(fake.requests_matching("GET", "/api/v1/pods")) == 2
        ):
            fake.cluster.compact()
        return original(cid)

    fake.cluster.sorted_keys = compact_once_mid_list
    report = sync_once(cluster, fast)
    assert report.ok
    pods = fake.requests_matching("GET", "/api/v1/pods")
    fresh_starts = [i for i, request in enumerate(pods) if "continue" not in request.query]
    assert len(fresh_starts) == 2 and fresh_starts[0] == 0  # listed again from the start
    assert "limit" not in pods[fresh_starts[1]].query  # in one request, as client-go's pager
    assert_mirror_matches(fake, cluster)


def test_a_list_whose_continuation_always_expires_still_finishes(fake, connect, fast):
    cluster = connect(fake)
    original = fake.cluster.sorted_keys

    def compact_after_every_page(cid):  # a list slower than the server's compaction
        if cid == ("", "pods") and fake.requests_matching("GET", "/api/v1/pods"):
            fake.cluster.compact()
        return original(cid)

    fake.cluster.sorted_keys = compact_after_every_page
    report = sync_once(cluster, fast)
    assert report.ok
    assert len(fake.requests_matching("GET", "/api/v1/pods")) == 3  # page, 410, whole list
    assert_mirror_matches(fake, cluster)


def test_a_cluster_that_cannot_be_reached_fails_to_connect(fake, connect, fast):
    cluster = connect(fake)
    fake.stop()
    with pytest.raises(SyncConnectError, match="cannot reach the API server"):
        sync_once(cluster, fast)


@pytest.mark.skipif(
    connection.vendor != "postgresql", reason="PostgreSQL refuses a value too long for its column"
)
def test_an_object_the_database_refuses_in_a_resync_is_kept_not_removed(fake, connect, fast):
    cluster = connect(fake)
    assert sync_once(cluster, fast).ok
    pod = copy.deepcopy(next(iter(fake.cluster.objects[("", "pods")].values())))
    pod["metadata"].setdefault("labels", {})["touched"] = "yes"
    pod["spec"]["schedulerName"] = "s" * 300  # the column holds 253: the database refuses
    name = pod["metadata"]["name"]
    fake.cluster.put(pod)
    report = sync_once(cluster, fast)
    assert report.counts[SyncResource.PODS]["errors"] == 1
    assert report.counts[SyncResource.PODS]["removed"] == 0
    kept = Pod.objects.get(cluster=cluster, name=name)
    assert "touched" not in kept.labels  # the version it had: skipped, neither lost nor changed
