"""clusters/{cluster}/qos: the stored ConfigMap; qos/nodes: effective strategy and schemata."""

from __future__ import annotations

import pytest
from rest_framework.test import APIClient

from tests.factories import NodeTopologyFactory
from topology.models import Cluster

from .factories import qos_config
from .mixins import EndpointTests, ListEndpointTests

pytestmark = pytest.mark.django_db
KOORDLET = {
    "cpu_basic_info": {"catL3CbmMask": "7ff", "vendorID": "GenuineIntel"},
    "cpu_shared_pools": [{"socket": 0, "node": 0, "cpuset": "0-3"}],
}


class TestStoredQoS(EndpointTests):
    def path(self, cluster: Cluster) -> str:
        return f"/api/v1/clusters/{cluster.name}/qos"

    def make_rows(self, cluster: Cluster, count: int) -> None:
        qos_config(cluster)


class TestNodeQoSList(ListEndpointTests):
    # session, user, 2 × permissions, cluster, count, nodes, ConfigMap, strategies, resctrl
    max_queries = 10

    def path(self, cluster: Cluster) -> str:
        return f"/api/v1/clusters/{cluster.name}/qos/nodes"

    def make_rows(self, cluster: Cluster, count: int) -> None:
        qos_config(cluster)
        NodeTopologyFactory.create_batch(
            count, node__cluster=cluster, flavour="koordinator", koordlet=KOORDLET
        )


def test_the_config_reads_as_koordinator_reads_it(
    viewer: APIClient, small_cluster: Cluster
) -> None:
    body = viewer.get("/api/v1/clusters/small/qos").json()
    assert (body["namespace"], body["name"]) == ("koordinator-system", "slo-controller-config")
    config = body["resource_qos_config"]
    assert config["clusterStrategy"]["beClass"]["resctrlQOS"]["catRangeEndPercent"] == 30
    assert [s["name"] for s in config["nodeStrategies"]] == ["amd-epyc-nps4"]


def test_a_cluster_without_the_configmap_is_404(viewer: APIClient, cluster: Cluster) -> None:
    response = viewer.get("/api/v1/clusters/prod/qos")
    assert response.status_code == 404
    assert "QoS ConfigMap" in response.json()["detail"]


def _by_node(client: APIClient) -> dict[str, dict]:
    body = client.get("/api/v1/clusters/small/qos/nodes", {"page_size": 100}).json()
    return {row["node"]: row for row in body["results"]}


def _group(row: dict, name: str) -> dict:
    return next(g for g in row["schemata"] if g["group"] == name)


def test_an_intel_node_gets_the_cluster_strategy(viewer: APIClient, small_cluster: Cluster) -> None:
    row = _by_node(viewer)["worker-03"]
    assert row["node_strategy"] is None
    assert (row["vendor"], row["cat_l3_cbm_mask"], row["l3_ids"]) == ("GenuineIntel", "3ff", [0])
    be = _group(row, "BE")
    assert (be["l3_line"], be["mb_line"]) == ("L3:0=7;", "MB:0=100;")  # 10 ways, 0–30 %
    assert row["strategy"]["beClass"]["cpuQOS"] == {"enable": True, "groupIdentity": -1}


def test_an_amd_node_gets_its_node_strategy_over_the_cluster_one(
    viewer: APIClient, small_cluster: Cluster
) -> None:
    row = _by_node(viewer)["worker-06"]
    assert row["node_strategy"] == "amd-epyc-nps4" and row["l3_ids"] == [0, 1]
    be, ls = _group(row, "BE"), _group(row, "LS")
    assert (be["l3_line"], be["mb_line"]) == ("L3:0=f;1=f;", "MB:0=80;1=80;")  # 16 ways, AMD
    assert ls["l3_line"] == "L3:0=fffc;1=fffc;"  # 10–100 %: ways 2..16
    strategy = row["strategy"]
    assert strategy["beClass"]["resctrlQOS"]["mbaPercent"] == 50
    assert strategy["beClass"]["cpuQOS"]["groupIdentity"] == -1  # kept from the cluster
    be_class = next(c for c in row["resctrl"] if c["qos_class"] == "beClass")
    assert be_class["origins"] == ["default", "cluster", "amd-epyc-nps4"]


def test_only_koordinator_nodes_are_listed(viewer: APIClient, small_cluster: Cluster) -> None:
    assert set(_by_node(viewer)) == {"worker-03", "worker-06"}


def test_nodes_filter_by_label(viewer: APIClient, small_cluster: Cluster) -> None:
    body = viewer.get(
        "/api/v1/clusters/small/qos/nodes",
        {"label": "node.kubernetes.io/instance-type=bm.amd.epyc7763.2s.nps4"},
    ).json()
    assert [row["node"] for row in body["results"]] == ["worker-06"]


def test_without_the_configmap_nodes_get_koordinators_defaults(
    viewer: APIClient, cluster: Cluster
) -> None:
    NodeTopologyFactory(
        node__cluster=cluster, node__name="k", flavour="koordinator", koordlet=KOORDLET
    )
    row = viewer.get("/api/v1/clusters/prod/qos/nodes").json()["results"][0]
    be = _group(row, "BE")
    assert be["l3_line"] == "L3:0=f;"  # 11 ways, 0–30 % by default
    assert not next(c for c in row["resctrl"] if c["qos_class"] == "beClass")["enable"]


def test_a_stated_cluster_strategy_overrides_the_defaults(
    viewer: APIClient, cluster: Cluster
) -> None:
    qos_config(cluster)
    NodeTopologyFactory(
        node__cluster=cluster, node__name="k", flavour="koordinator", koordlet=KOORDLET
    )
    row = viewer.get("/api/v1/clusters/prod/qos/nodes").json()["results"][0]
    be = _group(row, "BE")
    assert (be["l3_line"], be["mb_line"]) == ("L3:0=3f;", "MB:0=40;")  # 11 ways: 0..6
