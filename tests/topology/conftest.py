"""Fixtures shared by the topology tests: a small imported cluster, and a count of the
engine runs behind what-if answers."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from django.core.signals import request_finished, request_started
from django.db import close_old_connections

from tests.topology.helpers import sample_items
from topology.models import Cluster
from topology.services.mirror.importer import import_objects
from topology.services.whatif import service as whatif


@pytest.fixture
def small() -> Cluster:
    """The sample cluster-small.json, imported as cluster "small"."""
    summary = import_objects(cluster_name="small", objects=sample_items("cluster-small.json"))
    assert summary.ok, summary.errors
    return Cluster.objects.get(name="small")


@pytest.fixture
def engine_runs(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Counts the engine runs behind the answers (the real engine still answers)."""
    runs: list[int] = []
    real = whatif.judge_question

    def counted(*args: Any, **kwargs: Any) -> dict[str, Any]:
        runs.append(1)
        return real(*args, **kwargs)

    monkeypatch.setattr(whatif, "judge_question", counted)
    return runs


@pytest.fixture
def request_signals() -> Iterator[None]:
    """Lets a test send request_started and request_finished itself, as the test client
    does: without Django closing the test's database connection on them."""
    request_started.disconnect(close_old_connections)
    request_finished.disconnect(close_old_connections)
    try:
        yield
    finally:
        request_started.connect(close_old_connections)
        request_finished.connect(close_old_connections)
