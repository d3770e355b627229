"""Dashboard pages: login, content, filters in the URL, and bounded query counts."""

from __future__ import annotations

import html
import json

import pytest
from django.urls import reverse
from django.utils import timezone

from tests.factories import (
    ClusterFactory,
    NodeFiguresFactory,
    PodAllocationFactory,
    PodFactory,
    ReservationFactory,
    koordinator_node,
)
from topology.models import Cluster, Node, PodAgreement
from topology.selectors import overview as overview_selectors

from .factories import upstream_node

pytestmark = pytest.mark.django_db

# Fixed bounds, whatever the number of nodes: a regression to N+1 blows them. Each page
# reads the user's role permissions once (2: their own and their groups').
OVERVIEW_QUERIES = 16  # with the cluster's figures history (the trend chart)
# with the zones' distances, the node's findings and diagnoses, its DRA devices, its history
NODE_QUERIES = 20


@pytest.fixture
def cluster() -> Cluster:
    cluster = ClusterFactory(name="prod")
    for index in range(3):
        upstream_node(cluster, f"worker-{index}")
    node = koordinator_node(cluster, "koord-1", cpu_manager_policy="static")
    NodeFiguresFactory(node=node, free_cpus_by_zone={"0": 6, "1": 8}, max_free_cpus_in_one_zone=8)
    pod = PodFactory(node=node, name="web-0")
    PodAllocationFactory(pod=pod, cpuset="1,9")
    ReservationFactory(node=node, name="resv-web", cpuset="3,11")
    PodFactory(cluster=cluster, name="waiting", phase="Pending")  # not bound: diagnosed
    placed = {"numa_zones": [0], "cpuset": [1, 9]}
    body = {"namespace": pod.namespace, "name": "web-0", "node": "koord-1",
            "system": "koordinator", "verdict": "agree", "differs": [], "real": placed,
            "engine": {"feasible": True, **placed}, "why": ""}  # fmt: skip
    PodAgreement.objects.create(
        cluster=cluster, namespace=pod.namespace, name="web-0", node_name="koord-1",
        system="koordinator", verdict="agree", body=body, computed_at=timezone.now(),
    )  # fmt: skip
    return cluster


def url(view: str, **kwargs: str) -> str:
    return reverse(f"topology:{view}", kwargs=kwargs)


PAGES = [
    ("home", {}),
    ("sync", {}),
    ("overview", {"cluster": "prod"}),
    ("overview-live", {"cluster": "prod"}),
    ("node", {"cluster": "prod", "node": "koord-1"}),
    ("node-live", {"cluster": "prod", "node": "koord-1"}),
    ("reservations", {"cluster": "prod"}),
    ("reservation", {"cluster": "prod", "name": "resv-web"}),
    ("qos", {"cluster": "prod"}),
]


@pytest.mark.parametrize(("name", "kwargs"), PAGES)
def test_every_dashboard_page_needs_a_login(client, cluster, name, kwargs):
    response = client.get(url(name, **kwargs))
    assert response.status_code == 302
    assert response["Location"].startswith(reverse("login"))


@pytest.mark.parametrize(("name", "kwargs"), PAGES)
def test_staff_can_open_every_page(staff_client, cluster, name, kwargs):
    response = staff_client.get(url(name, **kwargs), follow=True)
    assert response.status_code == 200


def test_home_opens_the_first_clusters_overview(staff_client, cluster):
    assert staff_client.get(url("home"))["Location"] == url("overview", cluster="prod")


def test_home_without_clusters_says_how_to_get_one(staff_client):
    assert b"seed_demo" in staff_client.get(url("home")).content


@pytest.mark.parametrize("section", ["qos", "whatif"])
def test_the_switcher_keeps_the_section(staff_client, cluster, section):
    response = staff_client.get(url("switch"), {"cluster": "prod", "section": section})
    assert response["Location"] == url(section, cluster="prod")


def test_unknown_clusters_and_nodes_are_404(staff_client, cluster):
    assert staff_client.get(url("overview", cluster="nope")).status_code == 404
    assert staff_client.get(url("node", cluster="prod", node="nope")).status_code == 404


def names_in(response) -> list[str]:
    return [row.name for row in response.context["data"].rows]


def test_overview_lists_nodes_with_badges_and_summary(staff_client, cluster):
    response = staff_client.get(url("overview", cluster="prod"))
    assert names_in(response) == ["koord-1", "worker-0", "worker-1", "worker-2"]
    summary = response.context["data"].summary
    assert (summary.nodes, summary.zones, summary.computed) == (4, 8, 4)
    assert summary.largest_pod == 22
    body = response.content.decode()
    assert 'title="Koordinator (NRT v1alpha1 + koordlet)">koordinator</span>' in body
    assert 'id="zone-heatmap-data"' in body and "topology/vendor/plotly-cartesian.min.js" in body


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ({"name": "work"}, ["worker-0", "worker-1", "worker-2"]),
        ({"label": "kubernetes.io/hostname=worker-1"}, ["worker-1"]),
        ({"label": "kubernetes.io/hostname"}, ["koord-1", "worker-0", "worker-1", "worker-2"]),
        ({"label": "missing=x"}, []),
        ({"flavour": "koordinator"}, ["koord-1"]),
        ({"policy": "single-numa-node"}, ["koord-1", "worker-0", "worker-1", "worker-2"]),
        ({"min_free_exclusive_cpus_in_one_zone": "10"}, ["worker-0", "worker-1", "worker-2"]),
        ({"ordering": "-name"}, ["worker-2", "worker-1", "worker-0", "koord-1"]),
        (
            {"ordering": "max_free_cpus_in_one_zone", "name": ""},
            ["koord-1", "worker-0", "worker-1", "worker-2"],
        ),
    ],
)
def test_filters_and_sort_come_from_the_url(staff_client, cluster, query, expected):
    assert names_in(staff_client.get(url("overview", cluster="prod"), query)) == expected


def test_nodes_without_figures_are_not_computed_and_left_out_of_min_free(staff_client, cluster):
    upstream_node(cluster, "fresh", figures=False)
    response = staff_client.get(url("overview", cluster="prod"))
    assert response.context["data"].summary.not_computed == 1
    assert "not computed yet" in response.content.decode()
    assert "fresh" not in names_in(
        staff_client.get(
            url("overview", cluster="prod"), {"min_free_exclusive_cpus_in_one_zone": "0"}
        )
    )


def test_a_bad_filter_value_is_reported_not_a_crash(staff_client, cluster):
    response = staff_client.get(
        url("overview", cluster="prod"), {"min_free_exclusive_cpus_in_one_zone": "lots"}
    )
    assert response.status_code == 200
    assert "Enter a whole number" in response.content.decode()


def test_the_overview_pages_long_lists(staff_client, cluster, monkeypatch):
    monkeypatch.setattr(overview_selectors, "PAGE_SIZE", 3)
    first = staff_client.get(url("overview", cluster="prod"), {"ordering": "name"})
    second = staff_client.get(url("overview", cluster="prod"), {"ordering": "name", "page": "2"})
    assert names_in(first) == ["koord-1", "worker-0", "worker-1"] and names_in(second) == [
        "worker-2"
    ]
    assert "?ordering=name&page=2" in first.content.decode()
    assert first.context["data"].summary.nodes == 4  # the summary covers every page


def test_overview_query_count_does_not_grow_with_nodes(
    staff_client, cluster, django_assert_max_num_queries
):
    with django_assert_max_num_queries(OVERVIEW_QUERIES):
        staff_client.get(url("overview", cluster="prod"))
    for index in range(30):
        upstream_node(cluster, f"more-{index:02d}", zones=4)
    with django_assert_max_num_queries(OVERVIEW_QUERIES):
        response = staff_client.get(url("overview", cluster="prod"))
    assert len(names_in(response)) == 34


def test_live_json_carries_figures_and_fragments(
    staff_client, cluster, django_assert_max_num_queries
):
    with django_assert_max_num_queries(OVERVIEW_QUERIES):
        response = staff_client.get(
            url("overview-live", cluster="prod"), {"flavour": "koordinator"}
        )
    payload = json.loads(response.content)
    assert set(payload["figures"]) == {"zone-heatmap", "free-distribution"}
    assert payload["figures"]["zone-heatmap"]["layout"]["meta"]["nodes"] == ["koord-1"]
    assert set(payload["data"]["html"]) == {"overview-summary", "node-table", "data-age"}
    assert response["Cache-Control"] == "no-store"


def test_node_page_draws_the_core_map_and_lists_pods(
    staff_client, cluster, django_assert_max_num_queries
):
    with django_assert_max_num_queries(NODE_QUERIES):
        response = staff_client.get(url("node", cluster="prod", node="koord-1"))
    body = response.content.decode()
    assert 'id="core-map-data"' in body and 'id="zone-bars-data"' in body
    assert "team/web-0" in body and "resv-web" in body
    pods = response.context["pods"]
    assert pods[0].full_name == "team/web-0" and pods[0].code == "A"


def test_node_page_query_count_does_not_grow_with_pods(
    staff_client, cluster, django_assert_max_num_queries
):
    node = cluster.nodes.get(name="koord-1")
    for index in range(20):
        PodAllocationFactory(
            pod=PodFactory(node=node, name=f"many-{index}"), cpuset=str(20 + index)
        )
    with django_assert_max_num_queries(NODE_QUERIES):
        staff_client.get(url("node", cluster="prod", node="koord-1"))


def test_a_node_without_cpu_detail_shows_counts_and_why(staff_client, cluster):
    response = staff_client.get(url("node", cluster="prod", node="worker-0"))
    body = response.content.decode()
    assert "core-map-data" not in body
    assert "names no CPU ids, cores or sockets" in body
    assert "CPUs per NUMA zone (the NRT publishes counts only)" in body


def test_node_live_json(staff_client, cluster):
    payload = json.loads(staff_client.get(url("node-live", cluster="prod", node="koord-1")).content)
    assert set(payload["figures"]) == {"core-map", "zone-bars"}
    assert {"core-legend", "zone-counts", "node-pods", "data-age"} == set(payload["data"]["html"])


def test_the_node_page_writes_quantities_as_kubernetes_does(staff_client, cluster):
    """Issue 27: "Crane reserved: cpu=2000, memory=4294967296", the raw Node shown with
    its stored integers ("cpu": 380000), and "NRT topologyPolicies: None"."""
    node = Node.objects.get(cluster=cluster, name="koord-1")
    node.allocatable = {"cpu": 380_000, "memory": 4 * 2**30}
    node.save()
    topology = node.topology
    topology.topology_policies = ["None"]
    topology.crane_cpu_manager_policy = "Static"
    topology.crane_reserved = {"cpu": 2000, "memory": 4 * 2**30}
    topology.save()
    body = staff_client.get(url("node", cluster="prod", node="koord-1")).content.decode()
    assert "cpu=2, memory=4Gi" in body
    assert "&quot;cpu&quot;: &quot;380&quot;" in body and "380000" not in body
    assert "[&quot;None&quot;]" in body


@pytest.mark.parametrize("label", ["=foo", "bad key=x", "pool=no spaces"])
def test_an_invalid_label_filter_is_reported_not_ignored(staff_client, cluster, label):
    """Issue 27: an invalid label filter (`=foo`) was silently ignored."""
    response = staff_client.get(url("overview", cluster="prod"), {"label": label})
    body = response.content.decode()
    assert response.status_code == 200 and 'class="error" role="alert"' in body
    assert html.escape(repr(label)) in body or label in body


@pytest.mark.parametrize(
    ("page", "notice"),
    [("abc", "is not a page number"), ("-3", "is not a page number"), ("99", "showing the last")],
)
def test_a_page_that_is_not_there_is_said(staff_client, cluster, page, notice):
    response = staff_client.get(url("overview", cluster="prod"), {"page": page})
    assert response.status_code == 200 and notice in response.content.decode()


def test_a_cpuset_wraps_only_after_a_comma():
    """Issue 27: cpusets wrapped mid-range ("0-/3") in tables."""
    from topology.templatetags.dashboard import cpuset

    rendered = str(cpuset("0-3,8,10-11"))
    assert rendered == (
        '<span class="range">0-3</span>,<wbr><span class="range">8</span>,<wbr>'
        '<span class="range">10-11</span>'
    )
    assert "&lt;" in str(cpuset("<b>"))  # escaped


def test_the_node_page_shows_the_numa_distance_matrix(staff_client, cluster):
    """Issue 27: the node page showed no NUMA distances (the API already had `costs`)."""
    from topology.models import Zone

    zones = list(Zone.objects.filter(topology__node__name="koord-1", zone_type="Node"))
    names = [zone.name for zone in zones]
    for zone in zones:
        zone.costs = {other: 10 if other == zone.name else 21 for other in names}
        zone.save()
    body = staff_client.get(url("node", cluster="prod", node="koord-1")).content.decode()
    assert "NUMA distances, as the NRT publishes them" in body
    assert body.count('<td class="num">21</td>') == len(names) * (len(names) - 1)


def test_the_overview_sorts_by_the_apis_ordering_names_and_keeps_old_links(staff_client, cluster):
    """Issue 27: the dashboard's sort names were not the API's `ordering` names."""
    from scheduler_api.api.filtersets import NodeFilterSet as ApiNodeFilterSet
    from topology.filtersets import NodeFilterSet as PageNodeFilterSet

    api_names = ApiNodeFilterSet.base_filters["ordering"].param_map
    assert PageNodeFilterSet.base_filters["ordering"].param_map == api_names
    page = staff_client.get(url("overview", cluster="prod"), {"ordering": "-name"})
    assert names_in(page) == sorted(names_in(page), reverse=True)
    body = page.content.decode()
    assert "?ordering=name" in body and "?sort=" not in body and "&sort=" not in body
    for old, new in (("free", "max_free_cpus_in_one_zone"), ("-largest", "-largest_exclusive_pod")):
        legacy = staff_client.get(url("overview", cluster="prod"), {"sort": old}, follow=True)
        assert legacy.redirect_chain == [(f"/c/prod/?ordering={new}", 302)]
        modern = staff_client.get(url("overview", cluster="prod"), {"ordering": new})
        assert names_in(legacy) == names_in(modern)


def test_the_node_page_shows_which_zone_each_device_sits_on(staff_client, cluster):
    """Issue 27: the node page did not say which NUMA zone a device (a GPU, a NIC) is on."""
    from tests.factories import ZoneResourceFactory
    from topology.models import Zone

    zones = {z.numa_id: z for z in Zone.objects.filter(topology__node__name="worker-0")}
    ZoneResourceFactory(
        zone=zones[1], name="nvidia.com/gpu", capacity=2, allocatable=2, available=1
    )
    response = staff_client.get(url("node", cluster="prod", node="worker-0"))
    assert [(d.resource, d.per_zone[0]) for d in response.context["detail"].devices] == [
        ("nvidia.com/gpu", None)
    ]
    body = response.content.decode()
    assert "Devices per NUMA zone" in body and '<td class="num">1 / 2</td>' in body
    plain = staff_client.get(url("node", cluster="prod", node="worker-1")).content.decode()
    assert "Devices per NUMA zone" not in plain  # CPU and memory are no devices


def test_only_extended_resources_count_as_devices():
    from topology.selectors.node_detail import is_device

    devices = ["nvidia.com/gpu", "openshift.io/sriov-nic", "koordinator.sh/gpu-core"]
    native = ["cpu", "memory", "hugepages-1Gi", "kubernetes.io/batch-cpu", "pods"]
    assert [is_device(r) for r in devices] == [True] * 3
    assert [is_device(r) for r in native] == [False] * 5


def test_the_overview_and_the_api_share_one_node_filter_set(staff_client, cluster):
    """Issue 29 §8: one NodeFilterSet for the API and the dashboard; the page's old
    `min_free` links redirect to the shared name."""
    from scheduler_api.api.filtersets import NodeFilterSet as ApiNodeFilterSet
    from topology.filtersets import NodeFilterSet as PageNodeFilterSet

    assert ApiNodeFilterSet is PageNodeFilterSet
    legacy = staff_client.get(url("overview", cluster="prod"), {"min_free": "10"}, follow=True)
    assert legacy.redirect_chain == [("/c/prod/?min_free_exclusive_cpus_in_one_zone=10", 302)]
    assert names_in(legacy) == ["worker-0", "worker-1", "worker-2"]
    both = staff_client.get(url("overview", cluster="prod"), {"label": "a=b,c"})
    assert both.status_code == 200  # several terms ANDed, as the API takes them
