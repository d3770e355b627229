"""Fixtures shared by the topology tests: a small imported cluster, and a count of the
engine runs behind what-if answers."""

from __future__ import annotations

from typing import Any

import pytest

from tests.topology.helpers import sample_items
from topology.models import Cluster
from topology.services import whatif
from topology.services.importer import import_objects


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
    real = whatif.run_on_snapshot

    def counted(*args: Any, **kwargs: Any) -> dict[str, Any]:
        runs.append(1)
        return real(*args, **kwargs)

    monkeypatch.setattr(whatif, "run_on_snapshot", counted)
    return runs
