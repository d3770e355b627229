"""Issue 27: the scheduler configuration ConfigMap a cluster's connection names is synced.

Its profiles (schedulerName → the system that judges) then drive the what-if as a
document uploaded in admin does; the sync never touches uploaded documents.
"""

from __future__ import annotations

import copy

import pytest
import yaml

from tests.sync.conftest import WatchRun, sync_once, wait_for
from topology.choices import SyncResource
from topology.models import ClusterConnection, SchedulerConfiguration, SyncError, SyncState
from topology.services.whatif.scheduler_profiles import cluster_profiles

NAMESPACE, NAME = "koordinator-system", "koord-scheduler-config"
UPLOADED = """
apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
  - schedulerName: topo-aware-scheduler
    plugins: {multiPoint: {enabled: [{name: NodeResourceTopologyMatch}]}}
"""


def koord_configmap(bind_policy: str = "FullPCPUs") -> dict:
    config = {
        "apiVersion": "kubescheduler.config.k8s.io/v1",
        "kind": "KubeSchedulerConfiguration",
        "profiles": [
            {
                "schedulerName": "koord-scheduler",
                "plugins": {"filter": {"enabled": [{"name": "NodeNUMAResource"}]}},
                "pluginConfig": [
                    {"name": "NodeNUMAResource", "args": {"defaultCPUBindPolicy": bind_policy}}
                ],
            }
        ],
    }
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"namespace": NAMESPACE, "name": NAME},
        "data": {"koord-scheduler-config": yaml.safe_dump(config)},
    }


@pytest.fixture
def koord_fake(make_fake, demo_items):
    return make_fake([*copy.deepcopy(demo_items), koord_configmap()])


def name_configmap(cluster, reference=f"{NAMESPACE}/{NAME}"):
    ClusterConnection.objects.filter(cluster=cluster).update(scheduler_configmap=reference)


def systems(cluster) -> dict[str, str]:
    return {p.scheduler_name: p.system.value for p in cluster_profiles(cluster)}


def bind_policy(cluster) -> str:
    (profile,) = [p for p in cluster_profiles(cluster) if p.scheduler_name == "koord-scheduler"]
    return str(profile.arguments()["defaultCPUBindPolicy"])


@pytest.mark.django_db
def test_the_named_configmap_is_synced_beside_uploaded_documents(koord_fake, connect, fast):
    cluster = connect(koord_fake)
    name_configmap(cluster)
    SchedulerConfiguration.objects.create(cluster=cluster, name=NAME, document=UPLOADED)
    report = sync_once(cluster, fast)
    assert report.ok, report.as_dict()
    synced = SchedulerConfiguration.objects.get(cluster=cluster, synced_from=f"{NAMESPACE}/{NAME}")
    assert synced.name == NAME and synced.resource_version
    assert systems(cluster) == {
        "koord-scheduler": "koordinator",
        "topo-aware-scheduler": "scheduler-plugins",
    }
    state = SyncState.objects.get(cluster=cluster, resource=SyncResource.SCHEDULER_CONFIG)
    assert state.served and state.listed_count == 1
    lists = koord_fake.requests_matching("GET", f"/api/v1/namespaces/{NAMESPACE}/configmaps")
    selectors = {r.query.get("fieldSelector") for r in lists}
    assert selectors == {f"metadata.name={NAME}", "metadata.name=slo-controller-config"}


@pytest.mark.django_db
def test_without_a_named_configmap_the_collection_is_skipped_and_says_why(fake, connect, fast):
    cluster = connect(fake)
    assert sync_once(cluster, fast).ok
    state = SyncState.objects.get(cluster=cluster, resource=SyncResource.SCHEDULER_CONFIG)
    assert not state.served and "no scheduler ConfigMap is named" in state.skipped_reason
    assert not SchedulerConfiguration.objects.filter(cluster=cluster).exists()


@pytest.mark.django_db(transaction=True, available_apps=["topology"])
def test_a_change_is_followed_a_bad_one_refused_and_a_delete_removes_it(koord_fake, connect, fast):
    cluster = connect(koord_fake)
    name_configmap(cluster)
    SchedulerConfiguration.objects.create(cluster=cluster, name="uploaded", document=UPLOADED)
    with WatchRun(cluster, fast):
        wait_for(lambda: bind_policy_or_none(cluster) == "FullPCPUs", what="the first list")
        koord_fake.cluster.put(koord_configmap("SpreadByPCPUs"))
        wait_for(lambda: bind_policy_or_none(cluster) == "SpreadByPCPUs", what="the change")
        koord_fake.cluster.put(koord_configmap("Sideways"))
        wait_for(
            lambda: SyncError.objects.filter(
                cluster=cluster, resource=SyncResource.SCHEDULER_CONFIG
            ).exists(),
            what="the refusal",
        )
        assert bind_policy(cluster) == "SpreadByPCPUs"  # the good document is kept
        error = SyncError.objects.get(cluster=cluster, resource=SyncResource.SCHEDULER_CONFIG)
        assert "defaultCPUBindPolicy" in error.message and error.object_name.endswith(NAME)
        koord_fake.cluster.delete(koord_configmap())
        wait_for(
            lambda: not SchedulerConfiguration.objects.exclude(synced_from="").exists(),
            what="the delete",
        )
    assert systems(cluster) == {"topo-aware-scheduler": "scheduler-plugins"}


def bind_policy_or_none(cluster) -> str | None:
    try:
        return bind_policy(cluster)
    except ValueError:
        return None


def test_a_bad_configmap_reference_is_refused_in_the_connection():
    from django.core.exceptions import ValidationError

    connection = ClusterConnection(mode="in-cluster", scheduler_configmap="no-slash")
    with pytest.raises(ValidationError, match="namespace/name"):
        connection.clean()
    connection.scheduler_configmap = "Bad_NS/name"
    with pytest.raises(ValidationError, match="namespace"):
        connection.clean()


@pytest.mark.django_db
def test_a_kubectl_dump_holding_the_configmap_imports_its_profiles():
    from topology.models import Cluster
    from topology.services.mirror.importer import import_objects

    unrelated = {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"namespace": "default", "name": "app-settings"},
        "data": {"kind": "KubeSchedulerConfiguration is mentioned, not declared"},
    }
    summary = import_objects(cluster_name="offline", objects=[koord_configmap(), unrelated])
    assert summary.ok, summary.errors
    cluster = Cluster.objects.get(name="offline")
    assert systems(cluster) == {"koord-scheduler": "koordinator"}
    assert SchedulerConfiguration.objects.get().synced_from == f"{NAMESPACE}/{NAME}"
