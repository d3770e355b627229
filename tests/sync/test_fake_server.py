"""The fake API server speaks the real wire format: the official client reads it as-is."""

from __future__ import annotations

import json
import threading

import pytest
from kubernetes import client as k8s
from kubernetes.client.exceptions import ApiException

from tests.sync.fakekube import FakeKubeServer, write_kubeconfig
from topology.choices import ConnectionMode
from topology.sync.client import ClusterClient, Credentials, load_configuration
from topology.sync.resources import NODES, NRT_UPSTREAM, PODS


@pytest.fixture
def api(fake: FakeKubeServer, tmp_path) -> k8s.ApiClient:
    path = write_kubeconfig(tmp_path / "kubeconfig", fake)
    return k8s.ApiClient(load_configuration(Credentials(ConnectionMode.KUBECONFIG, path)))


@pytest.fixture
def client(fake: FakeKubeServer, tmp_path, fast) -> ClusterClient:
    path = write_kubeconfig(tmp_path / "kubeconfig", fake)
    return ClusterClient.connect(Credentials(ConnectionMode.KUBECONFIG, path), fast)


def test_discovery_lists_groups_with_their_preferred_version(api):
    groups = {g.name: g for g in k8s.ApisApi(api).get_api_versions().groups}
    assert groups["topology.node.k8s.io"].preferred_version.version == "v1alpha2"
    assert [v.version for v in groups["topology.node.k8s.io"].versions] == ["v1alpha2", "v1alpha1"]
    assert k8s.CoreApi(api).get_api_versions().versions == ["v1"]
    resources = k8s.CustomObjectsApi(api).get_api_resources("topology.crane.io", "v1alpha1")
    assert [r.name for r in resources.resources] == ["noderesourcetopologies"]


def test_core_lists_page_with_limit_and_continue_and_deserialise(api, fake):
    core = k8s.CoreV1Api(api)
    first = core.list_pod_for_all_namespaces(limit=50)
    assert len(first.items) == 50 and first.metadata._continue
    second = core.list_pod_for_all_namespaces(limit=50, _continue=first.metadata._continue)
    assert second.metadata.resource_version == first.metadata.resource_version
    assert {p.metadata.name for p in first.items}.isdisjoint(p.metadata.name for p in second.items)
    total = len(fake.cluster.objects[("", "pods")])
    assert len(core.list_pod_for_all_namespaces().items) == total


def test_list_items_of_built_in_kinds_carry_no_type_meta_but_crds_do(client):
    node = client.list_page(NODES, limit=1).items[0]
    raw = client._json(client._core.list_node(limit=1, _preload_content=False))
    assert "kind" not in raw["items"][0] and node["kind"] == "Node"  # the client fills it in
    nrt = client.list_page(NRT_UPSTREAM.at("v1alpha1"), limit=1).items[0]
    assert nrt["apiVersion"] == "topology.node.k8s.io/v1alpha1"
    assert "attributes" not in nrt  # pruned by the v1alpha1 schema


def test_a_field_selector_leaves_finished_pods_out(client, fake):
    finished = [
        o
        for o in fake.cluster.objects[("", "pods")].values()
        if o["status"]["phase"] == "Succeeded"
    ]
    assert finished, "the demo cluster has a finished job pod"
    page = client.list_page(PODS, limit=10_000)
    assert {p["metadata"]["name"] for p in page.items}.isdisjoint(
        p["metadata"]["name"] for p in finished
    )


def test_a_watch_streams_chunked_events_and_bookmarks(client, fake):
    start = client.list_page(NODES, limit=1).resource_version
    node = next(iter(fake.cluster.objects[("", "nodes")].values()))
    events: list[dict] = []

    def consume() -> None:
        for event in client.watch(NODES, start):
            events.append(event)
            if len(events) >= 4:
                break

    reader = threading.Thread(target=consume)
    reader.start()
    changed = {**node, "metadata": {**node["metadata"], "labels": {"x": "1"}}}
    fake.cluster.put(changed)
    fake.cluster.delete(changed)
    fake.cluster.put({**node, "metadata": {"name": "brand-new"}})
    reader.join(timeout=5)
    kinds = [e["type"] for e in events]
    assert kinds[:3] == ["MODIFIED", "DELETED", "ADDED"] and "BOOKMARK" in kinds
    assert events[0]["object"]["kind"] == "Node"  # watch events carry TypeMeta


def test_a_watch_from_a_compacted_version_gets_error_410(client, fake):
    start = client.list_page(NODES, limit=1).resource_version
    fake.cluster.compact()
    event = next(iter(client.watch(NODES, start)))
    assert event["type"] == "ERROR" and event["object"]["code"] == 410


def test_patch_and_put_answer_409_on_a_stale_resource_version(client, fake):
    node = client.list_page(NODES, limit=1).items[0]
    name, rv = node["metadata"]["name"], node["metadata"]["resourceVersion"]
    patched = client.patch_node(
        name, {"metadata": {"labels": {"team": "a"}, "resourceVersion": rv}}
    )
    assert patched["metadata"]["labels"]["team"] == "a"
    with pytest.raises(ApiException) as stale:
        client.patch_node(name, {"metadata": {"labels": {"team": "b"}, "resourceVersion": rv}})
    assert stale.value.status == 409
    config = fake.cluster.get(("", "configmaps"), ("koordinator-system", "slo-controller-config"))
    config["data"]["extra"] = "1"
    client.replace_config_map("koordinator-system", "slo-controller-config", config)
    with pytest.raises(ApiException) as conflict:
        client.replace_config_map("koordinator-system", "slo-controller-config", config)
    assert conflict.value.status == 409
    assert json.loads(conflict.value.body)["reason"] == "Conflict"


def test_injected_5xx_and_refused_connections_reach_the_client(client, fake):
    fake.faults.fail_next(1, 503)
    with pytest.raises(ApiException) as unavailable:
        client.list_page(NODES, limit=1)
    assert unavailable.value.status == 503
    fake.faults.refuse_next(1)
    with pytest.raises(Exception):  # noqa: B017 - urllib3's ProtocolError or RemoteDisconnected
        client.list_page(NODES, limit=1)
    assert client.list_page(NODES, limit=1).items


def test_a_wrong_token_is_refused(fake, tmp_path, fast):
    path = write_kubeconfig(tmp_path / "bad", fake, token="wrong")
    bad = ClusterClient.connect(Credentials(ConnectionMode.KUBECONFIG, path), fast)
    with pytest.raises(ApiException) as denied:
        bad.list_page(NODES, limit=1)
    assert denied.value.status == 401
