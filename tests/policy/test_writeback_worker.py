"""End to end on a real Celery worker process and the configured broker (Redis via
CELERY_BROKER_URL): an apply requested here is queued on commit, run by the worker against
the fake API server, and its audit row finished in the shared database."""

from __future__ import annotations

import pytest

from tests.celery_worker import celery_worker
from tests.policy.writeback_support import KOORD_NODE, NUMA_POLICY, node_in_cluster, writes
from tests.sync.conftest import sync_once, wait_for
from topology.choices import ApplyStatus
from topology.models import ApplyRecord, Node, NodePolicy
from topology.services.writeback import request_node_policy_apply
from webapp.celery import app

pytestmark = pytest.mark.django_db(transaction=True, available_apps=["topology"])
pytest_plugins = ["tests.policy.writeback_fixtures"]


@pytest.fixture
def worker(tmp_path):
    with celery_worker(tmp_path / "worker.log", stop_timeout=5) as log:
        yield log
    app.control.purge()  # the figures task an apply queues, if the worker left it


def test_a_real_worker_runs_an_apply_end_to_end(worker, fake, connect, fast):
    cluster = connect(fake)
    sync_once(cluster, fast)
    node = Node.objects.get(cluster=cluster, name=KOORD_NODE)
    policy = NodePolicy.objects.create(node=node, numa_topology_policy="Restricted")
    record = request_node_policy_apply(policy=policy, user=None)  # queued on commit
    assert record.status == ApplyStatus.PENDING
    try:
        wait_for(
            lambda: ApplyRecord.objects.get(pk=record.pk).status != ApplyStatus.PENDING,
            timeout=60,
            what="the worker to run the apply",
        )
    except AssertionError:
        raise AssertionError(worker.read_text()[-4000:]) from None
    record.refresh_from_db()
    assert record.status == ApplyStatus.APPLIED, record.message
    assert node_in_cluster(fake, KOORD_NODE)["metadata"]["labels"][NUMA_POLICY] == "Restricted"
    assert [body["metadata"]["labels"] for body in writes(fake, "PATCH")] == [
        {NUMA_POLICY: "Restricted"}
    ]
    assert Node.objects.get(pk=node.pk).labels[NUMA_POLICY] == "Restricted"
    assert "topology.run_apply" in worker.read_text()
