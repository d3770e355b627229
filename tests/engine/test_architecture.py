"""The engine is pure Python: it imports with no Django settings and pulls in no Django."""

from __future__ import annotations

import os
import pkgutil
import subprocess
import sys
from pathlib import Path

import scheduler_api.engine as engine

ROOT = Path(__file__).resolve().parents[2]


def engine_modules() -> list[str]:
    return sorted(f"scheduler_api.engine.{m.name}" for m in pkgutil.iter_modules(engine.__path__))


def test_every_engine_module_imports_without_django():
    modules = engine_modules()
    assert "scheduler_api.engine.hints" in modules
    script = (
        "import importlib, sys\n"
        f"for name in {modules!r}:\n"
        "    importlib.import_module(name)\n"
        "bad = sorted(m for m in sys.modules if m.split('.')[0] in "
        "{'django', 'rest_framework', 'celery', 'topology'})\n"
        "assert not bad, bad\n"
    )
    env = {k: v for k, v in os.environ.items() if k != "DJANGO_SETTINGS_MODULE"}
    result = subprocess.run(
        [sys.executable, "-c", script], cwd=ROOT, env=env, capture_output=True, text=True
    )
    assert result.returncode == 0, result.stderr
