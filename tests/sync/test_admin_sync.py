"""Admin registers clusters with their credentials, shows sync state and errors, and never
shows, logs or returns where the credentials are."""

from __future__ import annotations

import copy
import logging

import pytest
from django.urls import reverse

from tests.sync.conftest import FAST, sync_once
from topology.choices import ConnectionMode, SyncResource
from topology.models import Cluster, ClusterConnection, SyncState
from topology.sync.settings import SyncSettings

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def quick_passwords(settings):
    """The admin user's password hashing is not what these tests are about."""
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]


@pytest.fixture
def synced(fake, connect, fast):
    cluster = connect(fake)
    pod = copy.deepcopy(next(iter(fake.cluster.objects[("", "pods")].values())))
    pod["metadata"]["name"] = "broken"
    pod["spec"]["containers"][0]["resources"] = {"requests": {"cpu": "x"}}
    fake.cluster.put(pod)
    sync_once(cluster, fast)
    return cluster


def test_lists_show_sync_state_and_errors_but_never_where_credentials_are(admin_client, synced):
    path, context = synced.connection.kubeconfig_path, synced.connection.context
    pages = [
        admin_client.get(reverse(f"admin:topology_{model}_changelist")).content.decode()
        for model in ("cluster", "syncstate", "syncerror", "node", "pod")
    ]
    clusters, states, errors = pages[:3]
    assert "kubeconfig file" in clusters and ">1<" in clusters  # mode and one sync error
    assert "noderesourcetopologies.topology.crane.io" in states or "Crane" in states
    assert "broken" in errors and "spec.containers[0].resources.requests" in errors
    for page in pages:
        assert path not in page and context not in page


def test_the_cluster_page_shows_each_collections_state(admin_client, synced):
    page = admin_client.get(reverse("admin:topology_cluster_change", args=[synced.pk]))
    text = page.content.decode()
    assert page.status_code == 200 and "Sync states" in text
    assert SyncState.objects.filter(cluster=synced, resource=SyncResource.PODS).exists()


def test_a_cluster_registered_in_admin_gets_schedules_and_a_watch_on_commit(
    admin_client, sent, tmp_path, django_capture_on_commit_callbacks
):
    data = {
        "name": "staging",
        "description": "",
        "connection-TOTAL_FORMS": "1",
        "connection-INITIAL_FORMS": "0",
        "connection-MIN_NUM_FORMS": "0",
        "connection-MAX_NUM_FORMS": "1",
        "connection-0-mode": ConnectionMode.KUBECONFIG,
        "connection-0-kubeconfig_path": str(tmp_path / "kubeconfig"),
        "connection-0-context": "staging",
        "connection-0-enabled": "on",
        "sync_states-TOTAL_FORMS": "0",
        "sync_states-INITIAL_FORMS": "0",
        "sync_states-MIN_NUM_FORMS": "0",
        "sync_states-MAX_NUM_FORMS": "1000",
    }
    with django_capture_on_commit_callbacks(execute=True):
        response = admin_client.post(reverse("admin:topology_cluster_add"), data)
    assert response.status_code == 302, response.content.decode()[:2000]
    cluster = Cluster.objects.get(name="staging")
    assert ClusterConnection.objects.get(cluster=cluster).context == "staging"
    assert ("topology.ensure_schedules", []) in sent
    assert ("topology.watch_cluster", [cluster.pk]) in sent


def test_a_kubeconfig_connection_without_a_path_is_refused(admin_client):
    data = {
        "name": "nopath",
        "connection-TOTAL_FORMS": "1",
        "connection-INITIAL_FORMS": "0",
        "connection-MIN_NUM_FORMS": "0",
        "connection-MAX_NUM_FORMS": "1",
        "connection-0-mode": ConnectionMode.KUBECONFIG,
        "connection-0-kubeconfig_path": "",
        "sync_states-TOTAL_FORMS": "0",
        "sync_states-INITIAL_FORMS": "0",
    }
    response = admin_client.post(reverse("admin:topology_cluster_add"), data)
    assert response.status_code == 200 and "needs its path" in response.content.decode()
    assert not Cluster.objects.filter(name="nopath").exists()


def test_the_resync_action_queues_a_resync_on_commit(
    admin_client, synced, sent, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks(execute=True):
        admin_client.post(
            reverse("admin:topology_cluster_changelist"),
            {"action": "resync_now", "_selected_action": [synced.pk]},
        )
    assert sent == [("topology.sync_cluster", [synced.pk])]


def test_logs_of_a_troubled_sync_hold_no_credentials(fake, connect, fast, caplog):
    cluster = connect(fake)
    fake.faults.fail_next(2, 503)
    caplog.set_level(logging.DEBUG)
    sync_once(cluster, fast)
    fake.faults.refuse_next(1)
    sync_once(cluster, fast)
    assert caplog.records, "the sync logs what it does"
    for secret in (fake.token, cluster.connection.kubeconfig_path, cluster.connection.context):
        assert secret not in caplog.text
    states = SyncState.objects.filter(cluster=cluster).values_list("last_error", flat=True)
    assert not any(fake.token in error for error in states)


def test_settings_with_unknown_sync_knobs_are_refused(settings):
    settings.TOPOLENS_SYNC = {**FAST, "page_sise": 3}
    with pytest.raises(ValueError, match="page_sise"):
        SyncSettings.load()


def test_the_api_shows_sync_state_but_never_where_credentials_are(admin_client, synced):
    path, context = synced.connection.kubeconfig_path, synced.connection.context
    for url in ("/api/v1/clusters", f"/api/v1/clusters/{synced.name}"):
        response = admin_client.get(url)
        assert response.status_code == 200, (url, response.status_code)
        body = response.content.decode()
        assert "synced_through" in body
        assert path not in body and context not in body and "kubeconfig" not in body
