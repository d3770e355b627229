"""End to end on a real Celery worker process and the configured broker (Redis via
CELERY_BROKER_URL): an apply requested here is queued on commit, run by the worker against
the fake API server, and its audit row finished in the shared database."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from tests.celery_worker import celery_worker
from tests.policy.writeback_support import KOORD_NODE, NUMA_POLICY, node_in_cluster, writes
from tests.sync.conftest import sync_once, wait_for
from topology.choices import ApplyStatus
from topology.models import ApplyRecord, Node, NodePolicy
from topology.services.policies.writeback import request_node_policy_apply
from topology.services.policies.writeback import requests as writeback_requests
from topology.services.policies.writeback.lost import recover_lost_applies
from webapp.celery import app

pytestmark = pytest.mark.django_db(transaction=True, available_apps=["topology"])
pytest_plugins = ["tests.policy.writeback_fixtures"]


@pytest.fixture
def worker(tmp_path):
    with celery_worker(tmp_path / "worker.log", stop_timeout=5) as log:
        yield log
    app.control.purge()  # the figures task an apply queues, if the worker left it


def wait_until_run(record: ApplyRecord, worker, what: str) -> None:
    """Wait until the worker has run the apply (its log in the failure), then reload it."""
    try:
        wait_for(
            lambda: ApplyRecord.objects.get(pk=record.pk).status != ApplyStatus.PENDING,
            timeout=60,
            what=what,
        )
    except AssertionError:
        raise AssertionError(worker.read_text()[-4000:]) from None
    record.refresh_from_db()


def test_a_real_worker_runs_an_apply_end_to_end(worker, fake, connect, fast):
    cluster = connect(fake)
    sync_once(cluster, fast)
    node = Node.objects.get(cluster=cluster, name=KOORD_NODE)
    policy = NodePolicy.objects.create(node=node, numa_topology_policy="Restricted")
    record = request_node_policy_apply(policy=policy, user=None)  # queued on commit
    assert record.status == ApplyStatus.PENDING
    wait_until_run(record, worker, "the worker to run the apply")
    assert record.status == ApplyStatus.APPLIED, record.message
    assert node_in_cluster(fake, KOORD_NODE)["metadata"]["labels"][NUMA_POLICY] == "Restricted"
    assert [body["metadata"]["labels"] for body in writes(fake, "PATCH")] == [
        {NUMA_POLICY: "Restricted"}
    ]
    assert Node.objects.get(pk=node.pk).labels[NUMA_POLICY] == "Restricted"
    assert "topology.run_apply" in worker.read_text()


def test_a_lost_apply_is_sent_again_and_a_real_worker_runs_it(
    worker, fake, connect, fast, monkeypatch
):
    """The apply's first message never reaches the broker; housekeeping's resend, through
    the real broker, is what the worker runs."""
    cluster = connect(fake)
    sync_once(cluster, fast)
    node = Node.objects.get(cluster=cluster, name=KOORD_NODE)
    policy = NodePolicy.objects.create(node=node, numa_topology_policy="Restricted")
    with monkeypatch.context() as lost:
        lost.setattr(writeback_requests, "send_apply_task", lambda record_id: None)
        record = request_node_policy_apply(policy=policy, user=None)
    past = timezone.now() - timedelta(minutes=5)
    ApplyRecord.objects.filter(pk=record.pk).update(requested_at=past, queued_at=past)
    assert recover_lost_applies().requeued == 1
    wait_until_run(record, worker, "the worker to run the apply sent again")
    assert record.status == ApplyStatus.APPLIED and record.times_queued == 2, record.message
    assert len(writes(fake, "PATCH")) == 1
