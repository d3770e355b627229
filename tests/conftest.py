"""Shared fixtures. Engine tests need no database; app tests use the real one."""

from __future__ import annotations

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
