"""A real Celery worker process consumes tasks from the configured broker.

Locally that is the embedded filesystem broker; in CI, Redis. The worker
shares the test database, so the task's effect is read back from it.
"""

from __future__ import annotations

import time

import pytest

from tests.celery_worker import celery_worker
from tests.conftest import sample_path
from topology.models import Cluster, Node
from topology.tasks import import_files

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def worker(tmp_path):
    with celery_worker(tmp_path / "worker.log") as log:
        yield log


def test_a_real_worker_imports_a_file_sent_through_the_broker(worker):
    import_files.delay("via-worker", [str(sample_path("node-crane.json"))])
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if Node.objects.filter(cluster__name="via-worker").exists():
            break
        time.sleep(0.5)
    assert Cluster.objects.filter(name="via-worker").exists(), worker.read_text()[-3000:]
    assert Node.objects.get(cluster__name="via-worker").name == "worker-02"
