"""Every Kubernetes API call Topolens makes is allowed by the RBAC in deploy/kubernetes,
and that RBAC grants nothing more.

Checked three ways: here, on a sync that meets every kind of trouble and makes every
write; on every request any fake API server sees in the whole suite (the `make_fake`
fixture checks them when it stops the server); and statically, on the client calls
in the code.
"""

from __future__ import annotations

import ast
import copy
import time
from pathlib import Path

import pytest

from tests.sync import rbac
from tests.sync.conftest import WatchRun, sync_once, wait_for
from topology.sync.client import ClusterClient, credentials_of
from topology.sync.resources import CORE_RESOURCES, GROUP_RESOURCES

ROOT = Path(__file__).resolve().parents[2]
_RESERVATIONS = ("scheduling.koordinator.sh", "reservations")
# The client methods the code may call, and the request each one makes.
CLIENT_CALLS = {
    "get_api_versions": None,  # discovery: /api and /apis
    "get_api_resources": None,  # discovery: /apis/<group>/<version>
    "list_node": ("list/watch", "", "nodes"),
    "list_pod_for_all_namespaces": ("list/watch", "", "pods"),
    "list_event_for_all_namespaces": ("list/watch", "", "events"),
    "list_namespaced_config_map": ("list/watch", "", "configmaps"),
    "list_cluster_custom_object": ("list/watch", "*", "*"),
    "patch_node": ("patch", "", "nodes"),
    "replace_namespaced_config_map": ("update", "", "configmaps"),
    # The write-back: re-reads on a conflict, and Reservations made from a what-if.
    "read_node": ("get", "", "nodes"),
    "read_namespaced_config_map": ("get", "", "configmaps"),
    "get_cluster_custom_object": ("get", "scheduling.koordinator.sh", "reservations"),
    "create_cluster_custom_object": ("create", "scheduling.koordinator.sh", "reservations"),
}
GRANTS = {
    ("", "nodes", "cluster"): {"get", "list", "watch", "patch"},
    ("", "pods", "cluster"): {"get", "list", "watch"},
    ("", "events", "cluster"): {"list", "watch"},  # read, never one by one nor written
    ("topology.node.k8s.io", "noderesourcetopologies", "cluster"): {"get", "list", "watch"},
    ("topology.crane.io", "noderesourcetopologies", "cluster"): {"get", "list", "watch"},
    ("scheduling.koordinator.sh", "reservations", "cluster"): {"get", "list", "watch", "create"},
    ("", "configmaps", "koordinator-system"): {"get", "list", "watch", "update"},
    ("resource.k8s.io", "resourceslices", "cluster"): {"get", "list", "watch"},
    ("resource.k8s.io", "resourceclaims", "cluster"): {"get", "list", "watch"},
}


def test_the_rbac_grants_exactly_the_read_and_the_three_writes():
    granted: dict[tuple[str, str, str], set[str]] = {}
    for rule in rbac.bound_rules():
        for group in rule.groups:
            for resource in rule.resources:
                key = (group, resource, rule.namespace or "cluster")
                granted.setdefault(key, set()).update(rule.verbs)
    assert granted == GRANTS
    configmaps = [r for r in rbac.bound_rules() if "configmaps" in r.resources]
    names = {frozenset(r.verbs): r.names for r in configmaps}
    assert names == {
        frozenset({"get", "list", "watch", "update"}): {"slo-controller-config"},
        frozenset({"get", "list", "watch"}): {"koord-scheduler-config"},
    }


@pytest.mark.parametrize(
    ("method", "path", "query"),
    [
        ("DELETE", "/api/v1/nodes/n1", {}),
        ("GET", "/api/v1/secrets", {}),
        ("GET", "/api/v1/namespaces/koordinator-system/configmaps", {}),
        ("PUT", "/api/v1/namespaces/default/configmaps/slo-controller-config", {}),
        ("PUT", "/api/v1/namespaces/koordinator-system/configmaps/other", {}),
        ("PUT", "/api/v1/namespaces/koordinator-system/configmaps/koord-scheduler-config", {}),
        ("PATCH", "/api/v1/namespaces/default/pods/p", {}),
        ("PUT", "/apis/scheduling.koordinator.sh/v1alpha1/reservations/r", {}),
        ("DELETE", "/apis/scheduling.koordinator.sh/v1alpha1/reservations/r", {}),
        ("POST", "/api/v1/namespaces/default/pods", {}),
        ("GET", "/api/v1/namespaces/default/events/e", {}),
        ("POST", "/api/v1/namespaces/default/events", {}),
        ("PATCH", "/api/v1/namespaces/default/events/e", {}),
        ("DELETE", "/api/v1/namespaces/default/events/e", {}),
        ("GET", "/apis/events.k8s.io/v1/events", {}),
    ],
)
def test_the_checker_refuses_what_the_rbac_does_not_grant(method, path, query):
    assert not rbac.allowed(method, path, query, rbac.bound_rules())


@pytest.mark.django_db(transaction=True, available_apps=["topology"])
def test_every_request_of_a_full_sync_with_trouble_and_writes_is_allowed(fake, connect, fast):
    cluster = connect(fake)
    sync_once(cluster, fast)
    with WatchRun(cluster, fast):
        wait_for(lambda: fake.open_watch_count() >= 6, what="every watch")
        fake.faults.drop_next_watch(after_events=0, plural="pods")
        fake.cut_watches()
        fake.cluster.compact()
        time.sleep(0.5)
    client = ClusterClient.connect(credentials_of(cluster.connection), fast)
    node = next(iter(fake.cluster.objects[("", "nodes")].values()))
    client.patch_node(node["metadata"]["name"], {"metadata": {"labels": {"a": "b"}}})
    config = copy.deepcopy(
        fake.cluster.get(("", "configmaps"), ("koordinator-system", "slo-controller-config"))
    )
    client.replace_config_map("koordinator-system", "slo-controller-config", config)
    client.read_node(node["metadata"]["name"])
    client.read_config_map("koordinator-system", "slo-controller-config")
    reservation = copy.deepcopy(next(iter(fake.cluster.objects[_RESERVATIONS].values())))
    reservation["metadata"] = {"name": "made-by-topolens"}
    client.create_reservation(reservation)
    client.read_reservation("made-by-topolens", reservation["apiVersion"])
    client.close()
    assert {r.method for r in fake.requests} >= {"GET", "PATCH", "PUT", "POST"}
    assert any(r.is_watch for r in fake.requests)
    rbac.assert_allowed(fake.requests)


def test_every_client_call_in_the_code_is_known_and_allowed():
    calls = _client_calls(ROOT / "topology")
    unknown = calls - set(CLIENT_CALLS)
    assert not unknown, f"new Kubernetes calls {unknown}: add them here and to rbac.yaml"
    rules = rbac.bound_rules()
    collections = [(r.group, r.plural, r.namespace, r.field_selector) for r in CORE_RESOURCES]
    collections += [(r.group, r.plural, "", "") for r in GROUP_RESOURCES]
    for group, plural, namespace, selector in collections:
        for verb in ("list", "watch"):
            request = rbac.Attributes(verb, group, plural, namespace, "", selector)
            assert any(rule.allows(request) for rule in rules), (verb, group, plural)
    for method, target in CLIENT_CALLS.items():
        if target and target[0] in ("get", "patch", "update", "create"):
            names = {"configmaps": ("koordinator-system", "slo-controller-config")}
            namespace, name = names.get(target[2], ("", "some-node"))
            name = "" if target[0] == "create" else name
            request = rbac.Attributes(target[0], target[1], target[2], namespace, name, "")
            assert any(rule.allows(request) for rule in rules), method


def _client_calls(package: Path) -> set[str]:
    """Names of methods called on the kubernetes API objects (self._core, self._custom,
    k8s.CoreApi(...), k8s.ApisApi(...)) anywhere in the package."""
    receivers = {"_core", "_custom"}
    found: set[str] = set()
    for path in package.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)):
                continue
            target = node.func.value
            if isinstance(target, ast.Attribute) and target.attr in receivers:
                found.add(node.func.attr)
            elif isinstance(target, ast.Call) and isinstance(target.func, ast.Attribute):
                if target.func.attr.endswith("Api") and target.func.attr not in ("ApiClient",):
                    found.add(node.func.attr)
    return found
