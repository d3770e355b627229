"""QoS, sync health and Reservation pages: what they compute and how many queries they make."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.urls import reverse
from django.utils import timezone

from tests.factories import ClusterFactory, ReservationFactory, koordinator_node
from topology.models import QoSConfig, QoSStrategy, ResctrlSetting, SyncError, SyncState
from topology.selectors.qos import qos_page
from topology.selectors.reservations import expiry, owner_text
from topology.selectors.sync import Health, cluster_syncs

from .factories import upstream_node

pytestmark = pytest.mark.django_db
AMD = {"vendorID": "AuthenticAMD", "catL3CbmMask": "ffff"}
INTEL = {"vendorID": "GenuineIntel", "catL3CbmMask": "7ff"}


def koordlet(info, sockets=(0, 1)):
    pools = [{"socket": s, "node": s, "cpuset": ""} for s in sockets]
    return {"cpu_basic_info": info, "cpu_shared_pools": pools}


@pytest.fixture
def qos_cluster():
    cluster = ClusterFactory(name="prod")
    config = QoSConfig.objects.create(
        cluster=cluster,
        namespace="koordinator-system",
        name="slo-controller-config",
        observed_at=timezone.now(),
    )
    base = QoSStrategy.objects.create(config=config, position=0)
    ResctrlSetting.objects.create(
        strategy=base,
        qos_class="beClass",
        enable=True,
        cat_range_start_percent=0,
        cat_range_end_percent=30,
        mba_percent=15,
    )
    amd = QoSStrategy.objects.create(
        config=config, position=1, name="amd", node_selector={"matchLabels": {"cpu": "amd"}}
    )
    ResctrlSetting.objects.create(strategy=amd, qos_class="beClass", mba_percent=50)
    QoSStrategy.objects.create(
        config=config, position=2, name="nobody", node_selector={"matchLabels": {"x": "y"}}
    )
    for index in range(2):
        node = koordinator_node(cluster, f"intel-{index}", koordlet=koordlet(INTEL))
    node = koordinator_node(cluster, "epyc-0", koordlet=koordlet(AMD))
    node.labels = {"cpu": "amd"}
    node.save()
    upstream_node(cluster, "plain-0")
    return cluster


def test_nodes_are_grouped_by_strategy_vendor_and_cache(qos_cluster, django_assert_max_num_queries):
    with django_assert_max_num_queries(5):
        page = qos_page(qos_cluster)
    assert [(g.strategy, g.vendor, g.nodes) for g in page.groups] == [
        ("cluster", "GenuineIntel", ("intel-0", "intel-1")),
        ("cluster + amd", "AuthenticAMD", ("epyc-0",)),
    ]
    assert page.nodes_without_koordlet == 1
    intel, amd = ({s.group: s for s in g.schemata} for g in page.groups)
    assert intel["BE"].l3_line == "L3:0=f;1=f;" and intel["BE"].mb_line == "MB:0=20;1=20;"
    assert amd["BE"].l3_line == "L3:0=1f;1=1f;" and amd["BE"].mb_line == "MB:0=80;1=80;"
    assert amd["LS"].mb_line == "MB:0=2048;1=2048;"


def test_unmatched_strategies_and_roundings_are_reported(qos_cluster):
    page = qos_page(qos_cluster)
    assert any(i.subject == "nobody" and "matches no node" in i.message for i in page.issues)
    intel = page.groups[0]
    assert any("rounded up to 20" in i.message for i in intel.issues)


def test_the_qos_page_renders_lines_and_charts(staff_client, qos_cluster):
    body = staff_client.get(reverse("topology:qos", kwargs={"cluster": "prod"})).content.decode()
    assert "L3:0=f;1=f;" in body and "MB:0=80;1=80;" in body
    assert 'id="l3-ways-0-data"' in body and "resctrl schemata (AMD)" in body


def test_a_cluster_without_the_configmap_says_so(staff_client):
    ClusterFactory(name="bare")
    body = staff_client.get(reverse("topology:qos", kwargs={"cluster": "bare"})).content.decode()
    assert "slo-controller-config</code> ConfigMap is mirrored" in body


def test_sync_health_per_cluster_and_collection(django_assert_max_num_queries):
    now = timezone.now()
    live = ClusterFactory(name="live")
    ClusterFactory(name="dumps")
    SyncState.objects.create(cluster=live, resource="nodes", synced_through=now, lag_seconds=0.2)
    SyncState.objects.create(cluster=live, resource="pods", synced_through=now - timedelta(hours=1))
    SyncState.objects.create(
        cluster=live,
        resource="reservations.scheduling.koordinator.sh",
        consecutive_errors=3,
        last_error="forbidden",
    )
    SyncState.objects.create(
        cluster=live, resource="noderesourcetopologies.topology.crane.io", served=False
    )
    SyncError.objects.create(
        cluster=live,
        resource="pods",
        object_name="ns/p",
        message="bad",
        first_seen_at=now,
        last_seen_at=now,
    )
    with django_assert_max_num_queries(4):
        syncs = cluster_syncs(now)
    dumps, live_sync = syncs
    assert not dumps.synced and live_sync.synced
    health = {row.resource: row.health for row in live_sync.rows}
    assert health["nodes"] is Health.OK and health["pods"] is Health.STALE
    assert health["reservations.scheduling.koordinator.sh"] is Health.FAILING
    assert health["noderesourcetopologies.topology.crane.io"] is Health.NOT_SERVED
    assert health["configmaps/slo-controller-config"] is Health.NEVER
    assert live_sync.error_count == 1


def test_the_sync_page_shows_imports_when_the_sync_never_ran(staff_client):
    ClusterFactory(name="dumps")
    body = staff_client.get(reverse("topology:sync")).content.decode()
    assert "The live sync has never run for this cluster" in body


def test_reservation_owners_and_expiry_read_like_the_spec():
    assert owner_text({"labelSelector": {"matchLabels": {"app": "web"}}}) == "labels app=web"
    assert (
        owner_text({"object": {"kind": "Pod", "namespace": "ns", "name": "p"}}) == "object Pod ns/p"
    )
    created = timezone.now()
    assert expiry(ReservationFactory.build(ttl_seconds=0), created) == (None, "never expires")
    at, rule = expiry(ReservationFactory.build(ttl_seconds=5400), created)
    assert at == created + timedelta(seconds=5400) and rule == "ttl 1h30m"


def test_reservations_list_filters_by_phase(staff_client, django_assert_max_num_queries):
    cluster = ClusterFactory(name="prod")
    node = koordinator_node(cluster)
    ReservationFactory(node=node, name="resv-a")
    ReservationFactory(node=node, name="resv-b", phase="Failed")
    listing = reverse("topology:reservations", kwargs={"cluster": "prod"})
    with django_assert_max_num_queries(9):  # the role's permissions included
        response = staff_client.get(listing, {"phase": "Failed"})
    assert [row.reservation.name for row in response.context["rows"]] == ["resv-b"]
    detail = staff_client.get(
        reverse("topology:reservation", kwargs={"cluster": "prod", "name": "resv-a"})
    ).content.decode()
    assert "labels app=web" in detail and "2 CPU" in detail


def test_an_expired_reservation_is_never_shown_available(staff_client, staff):
    """Issue 27: demo Reservations that expired in 2024 were shown as Available."""
    from datetime import timedelta

    from django.utils import timezone
    from rest_framework.test import APIClient

    cluster = ClusterFactory(name="prod")
    node = koordinator_node(cluster)
    past = timezone.now() - timedelta(hours=1)
    ReservationFactory(node=node, name="resv-old", phase="Available", expires=past)
    ReservationFactory(node=node, name="resv-new", phase="Available",
                       expires=timezone.now() + timedelta(hours=1))  # fmt: skip
    listing = staff_client.get(reverse("topology:reservations", kwargs={"cluster": "prod"}))
    body = listing.content.decode()
    assert "Expired <small>(status still says Available)</small>" in body
    assert body.count("Expired <small>") == 1
    detail = staff_client.get(
        reverse("topology:reservation", kwargs={"cluster": "prod", "name": "resv-old"})
    )
    assert "Expired" in detail.content.decode()
    api = APIClient()
    api.force_authenticate(staff)
    answer = {r["name"]: r for r in api.get("/api/v1/clusters/prod/reservations").json()["results"]}
    assert answer["resv-old"]["expired"] is True and answer["resv-new"]["expired"] is False


def test_reservations_list_filters_by_node_and_sorts_with_the_apis_names(staff_client, staff):
    """Issue 27: the Reservations list had no node filter or sort; its names are the API's."""
    from rest_framework.test import APIClient

    cluster = ClusterFactory(name="prod")
    one, two = koordinator_node(cluster, "node-1"), koordinator_node(cluster, "node-2")
    ReservationFactory(node=one, name="resv-a", phase="Available")
    ReservationFactory(node=two, name="resv-b", phase="Failed")
    ReservationFactory(node=one, name="resv-c", phase="Pending")
    listing = reverse("topology:reservations", kwargs={"cluster": "prod"})
    api = APIClient()
    api.force_authenticate(staff)
    asks = [
        ({"node": "node-1"}, ["resv-a", "resv-c"]),
        ({"ordering": "-name"}, ["resv-c", "resv-b", "resv-a"]),
        ({"ordering": "phase"}, ["resv-a", "resv-b", "resv-c"]),
        ({"node": "node-1", "ordering": "-phase"}, ["resv-c", "resv-a"]),
        ({"ordering": "node,-name"}, ["resv-c", "resv-a", "resv-b"]),
    ]
    for params, expected in asks:
        page = staff_client.get(listing, params)
        assert [row.reservation.name for row in page.context["rows"]] == expected, params
        answer = api.get("/api/v1/clusters/prod/reservations", params).json()["results"]
        assert [r["name"] for r in answer] == expected, params


def test_a_bad_reservation_sort_or_page_is_reported(staff_client):
    cluster = ClusterFactory(name="prod")
    ReservationFactory(node=koordinator_node(cluster), name="resv-a")
    listing = reverse("topology:reservations", kwargs={"cluster": "prod"})
    body = staff_client.get(listing, {"ordering": "password", "page": "x"}).content.decode()
    assert 'role="alert"' in body and "is not one of the available choices" in body
    assert "“x” is not a page number" in body
