"""manage.py sync_cluster: register, list (--once) or list and watch (--duration)."""

from __future__ import annotations

import copy
import threading
import time

import pytest
from django.core.management import CommandError, call_command

from tests.sync.conftest import FAST
from tests.sync.fakekube import write_kubeconfig
from tests.sync.mirror_check import assert_mirror_matches
from topology.choices import ConnectionMode
from topology.models import Cluster, ClusterConnection, SyncState
from topology.sync import lease

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def fast_sync(settings):
    settings.TOPOLENS_SYNC = FAST


@pytest.fixture
def kubeconfig(fake, tmp_path):
    return write_kubeconfig(tmp_path / "config", fake, context="prod-admin")


def run(*args: str, capsys) -> str:
    call_command("sync_cluster", *args)
    return capsys.readouterr().out


def test_once_registers_the_cluster_lists_every_kind_and_prints_what_it_did(
    fake, kubeconfig, capsys
):
    out = run(
        "--cluster",
        "prod",
        "--kubeconfig",
        kubeconfig,
        "--context",
        "prod-admin",
        "--once",
        capsys=capsys,
    )
    connection = ClusterConnection.objects.get(cluster__name="prod")
    assert (connection.mode, connection.context) == (ConnectionMode.KUBECONFIG, "prod-admin")
    lines = {line.split()[0]: line.split() for line in out.splitlines() if line.strip()}
    assert lines["nodes"][1:4] == ["v1", "5", "0"]  # version, listed, events
    assert lines["pods"][2] == str(
        len(
            [
                p
                for p in fake.cluster.objects[("", "pods")].values()
                if p["status"]["phase"]
                != "Succeeded"  # Failed pods are listed (rejected ones kept)
            ]
        )
    )
    assert "collection" in out and "errors" in out
    assert_mirror_matches(fake, Cluster.objects.get(name="prod"))
    assert kubeconfig not in out and fake.token not in out


def test_a_second_run_uses_the_stored_connection(fake, kubeconfig, capsys):
    run("--cluster", "prod", "--kubeconfig", kubeconfig, "--once", capsys=capsys)
    out = run("--cluster", "prod", "--once", capsys=capsys)
    assert "figures recomputed for 5 nodes" in out


def test_a_duration_lists_then_applies_events_until_it_elapses(fake, kubeconfig, capsys):
    def change_later() -> None:
        time.sleep(0.6)
        pod = copy.deepcopy(next(iter(fake.cluster.objects[("", "pods")].values())))
        pod["metadata"]["labels"] = {"changed": "while-watching"}
        fake.cluster.put(pod)

    changer = threading.Thread(target=change_later)
    changer.start()
    started = time.monotonic()
    out = run("--cluster", "prod", "--kubeconfig", kubeconfig, "--duration", "1.5", capsys=capsys)
    changer.join()
    assert 1.5 <= time.monotonic() - started < 8
    pods = next(line.split() for line in out.splitlines() if line.startswith("pods"))
    assert int(pods[3]) >= 1  # events applied
    assert_mirror_matches(fake, Cluster.objects.get(name="prod"))


def test_it_exits_non_zero_when_the_cluster_cannot_be_reached(fake, kubeconfig):
    fake.stop()
    with pytest.raises(CommandError, match="cannot sync cluster prod: cannot reach the API server"):
        call_command("sync_cluster", "--cluster", "prod", "--kubeconfig", kubeconfig, "--once")


def test_unusable_credentials_are_refused_without_repeating_them(tmp_path):
    path = str(tmp_path / "missing-kubeconfig")
    with pytest.raises(CommandError) as refused:
        call_command("sync_cluster", "--cluster", "x", "--kubeconfig", path, "--once")
    assert "credentials could not be loaded" in str(refused.value) and path not in str(
        refused.value
    )
    with pytest.raises(CommandError, match="credentials could not be loaded"):
        call_command("sync_cluster", "--cluster", "y", "--in-cluster", "--once")


def test_a_cluster_without_a_connection_needs_one(capsys):
    Cluster.objects.create(name="imported")
    with pytest.raises(CommandError, match="has no connection yet"):
        call_command("sync_cluster", "--cluster", "imported", "--once")


def test_malformed_objects_are_reported_and_fail_the_run_after_syncing_the_rest(
    fake, kubeconfig, capsys
):
    node = copy.deepcopy(next(iter(fake.cluster.objects[("", "nodes")].values())))
    node["metadata"]["name"] = "broken-node"
    node["status"]["capacity"]["cpu"] = "plenty"
    fake.cluster.put(node)
    with pytest.raises(CommandError, match="1 object"):
        call_command("sync_cluster", "--cluster", "prod", "--kubeconfig", kubeconfig, "--once")
    assert_mirror_matches(fake, Cluster.objects.get(name="prod"), ignore={("Node", "broken-node")})


def test_a_cluster_another_session_syncs_is_left_alone(fake, kubeconfig):
    cluster = Cluster.objects.create(name="prod")
    lease.acquire(cluster.pk, "watch:worker-1", 60)
    with pytest.raises(CommandError, match="is being synced by watch:worker-1"):
        call_command("sync_cluster", "--cluster", "prod", "--kubeconfig", kubeconfig, "--once")


def test_a_malformed_kubeconfig_is_a_clear_recorded_error_that_repeats_nothing(tmp_path):
    """Issue 28: a YAML error escaped, printing the file's path, and nothing was recorded."""
    path = tmp_path / "kubeconfig"
    path.write_text("users:\n- name: admin\n  user: {token: s3cr3t-token\n  [unclosed")
    with pytest.raises(CommandError) as refused:
        call_command("sync_cluster", "--cluster", "bad", "--kubeconfig", str(path), "--once")
    message = str(refused.value)
    assert "credentials could not be loaded" in message
    assert str(path) not in message and "s3cr3t" not in message
    state = SyncState.objects.get(cluster__name="bad", resource="nodes")
    assert state.consecutive_errors == 1 and "credentials could not be loaded" in state.last_error
