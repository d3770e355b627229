"""Fixtures for the sync tests: a fake API server loaded with a demo cluster, a kubeconfig
pointing at it, tiny timeouts, and a watch session running in a background thread."""

from __future__ import annotations

import copy
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from django.db import connections

from tests.sync import rbac
from tests.sync.fakekube import FakeCluster, FakeKubeServer, write_kubeconfig
from topology.choices import ConnectionMode
from topology.demo import generate_demo_objects
from topology.models import Cluster, ClusterConnection
from topology.sync.client import credentials_of
from topology.sync.report import SyncReport
from topology.sync.session import ClusterSync
from topology.sync.settings import SyncSettings

# Tiny pages, timeouts and backoff so that every scenario runs in well under a second.
FAST = {
    "page_size": 20,
    "connect_timeout": 1.0,
    "read_timeout": 3.0,
    "watch_timeout": 3,
    "watch_read_margin": 1.0,
    "backoff_initial": 0.02,
    "backoff_ceiling": 0.2,
    "list_attempts": 4,
    "batch_size": 100,
    "flush_interval": 0.05,
    "lease_seconds": 10.0,
    "missing_node_grace": 0.6,
}


ALLOCATION_ANNOTATIONS = (
    "topology.crane.io/topology-result",
    "scheduling.koordinator.sh/resource-status",
)


@pytest.fixture(scope="session")
def demo_items() -> list[dict[str, Any]]:
    """A five-node demo cluster (every NRT flavour, reservations, the QoS ConfigMap), its
    pods thinned to those holding CPUs plus a sample of the rest, to keep tests quick."""
    items = generate_demo_objects(nodes=5, seed=4, cluster="fake")
    plain = [i for i in items if i["kind"] == "Pod" and not _holds_cpus(i)]
    dropped = {
        id(pod)
        for index, pod in enumerate(plain)
        if index % 4 and pod["status"]["phase"] == "Running"
    }
    return [i for i in items if id(i) not in dropped]


def _holds_cpus(pod: dict[str, Any]) -> bool:
    annotations = pod["metadata"].get("annotations") or {}
    return any(key in annotations for key in ALLOCATION_ANNOTATIONS)


@pytest.fixture
def fast() -> SyncSettings:
    return SyncSettings.load(**FAST)


@pytest.fixture
def make_fake(demo_items: list[dict[str, Any]]) -> Iterator[Callable[..., FakeKubeServer]]:
    servers: list[FakeKubeServer] = []

    def _make(
        objects: list[dict[str, Any]] | None = None,
        groups: dict[str, tuple[str, ...]] | None = None,
    ) -> FakeKubeServer:
        server = FakeKubeServer(FakeCluster(groups), bookmark_interval=0.2)
        server.cluster.load(copy.deepcopy(demo_items if objects is None else objects))
        servers.append(server.start())
        return server

    yield _make
    for server in servers:
        server.stop()
    for server in servers:  # whatever the test did, the ClusterRole must have allowed it
        rbac.assert_allowed(server.requests)


@pytest.fixture
def fake(make_fake: Callable[..., FakeKubeServer]) -> FakeKubeServer:
    return make_fake()


@pytest.fixture
def connect(tmp_path: Path) -> Callable[..., Cluster]:
    """Register a cluster whose kubeconfig points at a fake server."""

    def _connect(server: FakeKubeServer, name: str = "live") -> Cluster:
        path = write_kubeconfig(tmp_path / f"{name}.kubeconfig", server, context=f"ctx-{name}")
        cluster = Cluster.objects.create(name=name)
        ClusterConnection.objects.create(
            cluster=cluster,
            mode=ConnectionMode.KUBECONFIG,
            kubeconfig_path=path,
            context=f"ctx-{name}",
        )
        return cluster

    return _connect


def sync_once(cluster: Cluster, settings: SyncSettings) -> SyncReport:
    return ClusterSync(cluster, credentials_of(cluster.connection), settings).run_once()


class WatchRun:
    """A list-then-watch session in a background thread, as a worker runs it."""

    def __init__(self, cluster: Cluster, settings: SyncSettings, **options: Any) -> None:
        self.session = ClusterSync(cluster, credentials_of(cluster.connection), settings, **options)
        self.report: SyncReport | None = None
        self.error: BaseException | None = None
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        try:
            self.report = self.session.run_watch(duration=None)
        except BaseException as exc:  # surfaced in __exit__
            self.error = exc
        finally:
            connections.close_all()

    def __enter__(self) -> WatchRun:
        self._thread.start()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.session.stop()
        self._thread.join(timeout=20)
        assert not self._thread.is_alive(), "the watch session did not stop"
        if self.error is not None:
            raise self.error


def wait_for(check: Callable[[], Any], *, timeout: float = 10.0, what: str = "") -> Any:
    """Poll until `check()` is truthy; its last value is returned."""
    deadline = time.monotonic() + timeout
    while True:
        value = check()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what or check}")
        time.sleep(0.03)
