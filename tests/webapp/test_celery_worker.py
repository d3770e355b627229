"""A real Celery worker process consumes tasks from the configured broker.

Locally that is the embedded filesystem broker; in CI, Redis. The worker
shares the test database, so the task's effect is read back from it.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from django.conf import settings
from django.db import connection

from tests.conftest import sample_path
from topology.models import Cluster, Node
from topology.tasks import import_files

pytestmark = pytest.mark.django_db(transaction=True)
ROOT = Path(__file__).resolve().parents[2]


def _database_url() -> str:
    db = connection.settings_dict
    if db["ENGINE"].endswith("sqlite3"):
        return f"sqlite:///{db['NAME']}"
    user = db.get("USER") or "postgres"
    return (
        f"postgres://{user}@{db.get('HOST') or '127.0.0.1'}:{db.get('PORT') or 5432}/{db['NAME']}"
    )


@pytest.fixture
def worker(tmp_path):
    env = {**os.environ, "DATABASE_URL": _database_url(), "TOPOLENS_VAR_DIR": str(settings.VAR_DIR)}
    log = tmp_path / "worker.log"
    with log.open("w") as handle:
        process = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "celery",
                "-A",
                "webapp",
                "worker",
                "--pool=solo",
                "--loglevel=INFO",
                "--without-heartbeat",
                "--without-mingle",
                "--without-gossip",
            ],
            cwd=ROOT,
            env=env,
            stdout=handle,
            stderr=subprocess.STDOUT,
        )
    yield log
    process.terminate()
    try:
        process.wait(timeout=20)
    except subprocess.TimeoutExpired:
        process.kill()


def test_a_real_worker_imports_a_file_sent_through_the_broker(worker):
    import_files.delay("via-worker", [str(sample_path("node-crane.json"))])
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if Node.objects.filter(cluster__name="via-worker").exists():
            break
        time.sleep(0.5)
    assert Cluster.objects.filter(name="via-worker").exists(), worker.read_text()[-3000:]
    assert Node.objects.get(cluster__name="via-worker").name == "worker-02"
