"""Shared fixtures. Engine tests need no database; app tests use the real one."""

from __future__ import annotations

import importlib
import json
from pathlib import Path
from typing import Any

import pytest

SAMPLES_DIR = Path(__file__).resolve().parents[2] / "shared" / "reference" / "samples"
LOCAL_SAMPLES_DIR = Path(__file__).resolve().parent / "samples"


def sample_path(name: str) -> Path:
    """A reference sample: ../shared when present, else the copy under tests/samples."""
    for folder in (SAMPLES_DIR, LOCAL_SAMPLES_DIR):
        candidate = folder / name
        if candidate.exists():
            return candidate
    raise FileNotFoundError(name)


@pytest.fixture
def load_sample():
    def _load(name: str) -> dict[str, Any]:
        return json.loads(sample_path(name).read_text())

    return _load


ROLE_MIGRATIONS = (
    ("0002_roles", "create_roles"),
    ("0003_policy_roles", "grant"),
    ("0004_scheduler_configuration_roles", "grant"),
    ("0005_diagnosis_roles", "grant"),
    ("0006_agreement_roles", "grant"),
)


@pytest.fixture
def role_groups(db: None) -> None:
    """The role groups as the migrations make them, for tests whose live server flushed
    the database (a transactional flush removes what data migrations wrote)."""
    from django.apps import apps

    for module_name, function in ROLE_MIGRATIONS:
        module = importlib.import_module(f"scheduler_api.migrations.{module_name}")
        getattr(module, function)(apps, None)


@pytest.fixture(autouse=True)
def _fresh_rate_limits() -> None:
    """Rate-limit counters live in Django's cache; each test starts with none."""
    from django.core.cache import cache

    cache.clear()


@pytest.fixture(autouse=True)
def _no_snapshot_cache(settings: Any) -> None:
    """Tests build mirrors with factories, which bypass the writers that bump the mirror
    version; the snapshot cache is on only where a test asks for it."""
    from topology.services.whatif.snapshot_cache import clear_snapshot_cache

    settings.WHATIF_SNAPSHOT_CACHE_SIZE = 0
    clear_snapshot_cache()


@pytest.fixture
def sent(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, list[Any] | None]]:
    """Celery tasks sent by name (`send_task`): recorded as (name, args), not sent.

    The real broker is exercised end to end by the tests that start a worker.
    """
    from celery import current_app

    calls: list[tuple[str, list[Any] | None]] = []
    monkeypatch.setattr(
        current_app, "send_task", lambda name, args=None, **kw: calls.append((name, args))
    )
    return calls


@pytest.fixture(autouse=True)
def _books_checked_after_every_assume(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every assume the engine makes in any test leaves its node's books sound
    (`tests/engine/conformance/invariants.py`): a broken assume fails the test it runs in."""
    from scheduler_api.engine.whatif import assume as assume_module
    from scheduler_api.engine.whatif import judge
    from tests.engine.conformance.invariants import check_assumed

    original = assume_module.assume
    original_method = judge.Judgement._assume

    def checked(node: Any, *args: Any, **kwargs: Any) -> Any:
        after = original(node, *args, **kwargs)
        check_assumed(node, after)
        return after

    def checked_method(self: Any, node: Any, *args: Any, **kwargs: Any) -> Any:
        # the judgement's reservations: what koord-scheduler does not see of their owners
        after = original_method(self, node, *args, **kwargs)
        check_assumed(node, after, self.reservations)
        return after

    monkeypatch.setattr(assume_module, "assume", checked)
    monkeypatch.setattr(judge.Judgement, "_assume", checked_method)
