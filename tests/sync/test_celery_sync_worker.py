"""End to end: a real Celery worker process, on the configured broker (Redis in CI) and
database (PostgreSQL in CI), syncs a cluster from the fake API server and keeps watching
it on the watch queue."""

from __future__ import annotations

import copy
import time

import pytest

from tests.celery_worker import celery_worker
from tests.sync.conftest import wait_for
from tests.sync.mirror_check import assert_mirror_matches, versions_match
from topology import tasks
from topology.models import Pod
from topology.sync import lease
from webapp.celery import app

pytestmark = pytest.mark.django_db(transaction=True, available_apps=["topology"])
# Tiny timeouts and short watch sessions, read by the worker from its environment.
FAST_ENV = {
    "TOPOLENS_SYNC_PAGE_SIZE": "40",
    "TOPOLENS_SYNC_WATCH_TIMEOUT_SECONDS": "2",
    "TOPOLENS_SYNC_WATCH_MARGIN_MS": "1000",
    "TOPOLENS_SYNC_BACKOFF_INITIAL_MS": "20",
    "TOPOLENS_SYNC_BACKOFF_CEILING_MS": "200",
    "TOPOLENS_SYNC_FLUSH_INTERVAL_MS": "50",
    "TOPOLENS_SYNC_SESSION_SECONDS": "3",
    "TOPOLENS_SYNC_LEASE_SECONDS": "10",
}


@pytest.fixture
def worker(tmp_path):
    # A warm shutdown lets the running watch session end first; nothing of it is needed
    # after two seconds, and its connections close with it.
    pool = ("--pool=threads", "--concurrency=3")
    with celery_worker(tmp_path / "worker.log", pool=pool, env=FAST_ENV, stop_timeout=2) as log:
        yield log
    app.control.purge()  # the last watch session queued its successor


def test_a_real_worker_syncs_then_watches_a_cluster(worker, fake, connect):
    cluster = connect(fake)
    tasks.sync_cluster.delay(cluster.pk)
    try:
        wait_for(lambda: versions_match(fake, cluster), timeout=60, what="the resync")
    except AssertionError:
        raise AssertionError(worker.read_text()[-4000:]) from None
    assert_mirror_matches(fake, cluster)

    tasks.watch_cluster.delay(cluster.pk)  # routed to the "watch" queue
    wait_for(lambda: lease.live_owner(cluster.pk).startswith("watch:"), timeout=30, what="watch")
    pod = copy.deepcopy(next(iter(fake.cluster.objects[("", "pods")].values())))
    pod["metadata"]["labels"] = {"seen-by": "the-worker"}
    fake.cluster.put(pod)
    try:
        wait_for(
            lambda: Pod.objects.filter(cluster=cluster, labels={"seen-by": "the-worker"}).exists(),
            timeout=30,
            what="the watched change",
        )
    except AssertionError:
        raise AssertionError(worker.read_text()[-4000:]) from None
    time.sleep(0.2)
    assert_mirror_matches(fake, cluster)
