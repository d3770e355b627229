"""The 202 flow end to end: a real Celery worker on the configured broker answers the task.

Locally the broker is the embedded filesystem one; in CI, Redis. The worker shares
the test database, so the test commits its data and reads the answer back through
the API, as a client would.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from rest_framework.test import APIClient

from tests.celery_worker import celery_worker
from topology.models import Cluster
from topology.services.whatif.service import run_whatif

from .test_whatif import TOPO_AWARE, manifest, same_answer

pytestmark = pytest.mark.django_db(transaction=True, serialized_rollback=True)
FINISHED = {"succeeded", "failed"}


@pytest.fixture
def worker(tmp_path: Path) -> Iterator[Path]:
    with celery_worker(tmp_path / "worker.log") as log:
        yield log


def poll(client: APIClient, location: str, log: Path) -> dict[str, Any]:
    deadline = time.monotonic() + 90
    while time.monotonic() < deadline:
        body = client.get(location).json()
        if body["state"] in FINISHED:
            return body
        time.sleep(0.5)
    raise AssertionError(f"the task never finished; worker log:\n{log.read_text()[-3000:]}")


def test_a_large_what_if_is_answered_by_a_real_worker(
    worker: Path, trio: Cluster, client_for: Any, settings: Any
) -> None:
    settings.API_WHATIF_SYNC_MAX_REPLICAS = 2
    operator = client_for("operator")
    pod = manifest(scheduler_name=TOPO_AWARE)  # one system judges it: one ranking
    response = operator.post(
        "/api/v1/clusters/trio/whatif", {"pod": pod, "replicas": 3}, format="json"
    )
    assert response.status_code == 202, response.content
    done = poll(operator, response["Location"], worker)
    assert done["state"] == "succeeded", done
    expected = run_whatif(cluster=trio, pod=pod, replicas=3)
    assert same_answer(done["result"], expected)
    assert len(done["result"]["placements"]) == 3
