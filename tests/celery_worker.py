"""A real Celery worker process on the configured broker, sharing the test database.

Locally the broker is the embedded filesystem one; in CI, Redis. The worker reads the
test database through DATABASE_URL, so a test commits its data and reads effects back.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path

from django.conf import settings
from django.db import connection

ROOT = Path(__file__).resolve().parents[1]
QUIET = ("--without-heartbeat", "--without-mingle", "--without-gossip")


def database_url() -> str:
    """The test database as a URL the worker process understands."""
    db = connection.settings_dict
    if db["ENGINE"].endswith("sqlite3"):
        return f"sqlite:///{db['NAME']}"
    user = db.get("USER") or "postgres"
    host, port = db.get("HOST") or "127.0.0.1", db.get("PORT") or 5432
    return f"postgres://{user}@{host}:{port}/{db['NAME']}"


@contextmanager
def celery_worker(
    log: Path,
    *,
    pool: Sequence[str] = ("--pool=solo",),
    env: Mapping[str, str] | None = None,
    stop_timeout: float = 20,
) -> Iterator[Path]:
    """Run `celery -A webapp worker` until the block ends; yields its log file."""
    environment = {
        **os.environ,
        **(env or {}),
        "DATABASE_URL": database_url(),
        "TOPOLENS_VAR_DIR": str(settings.VAR_DIR),
    }
    command = [sys.executable, "-m", "celery", "-A", "webapp", "worker", *pool,
               "--loglevel=INFO", *QUIET]  # fmt: skip
    with log.open("w") as handle:
        process = subprocess.Popen(
            command, cwd=ROOT, env=environment, stdout=handle, stderr=subprocess.STDOUT
        )
    try:
        yield log
    finally:
        process.terminate()
        try:
            process.wait(timeout=stop_timeout)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=10)
