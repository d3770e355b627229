"""The conformance registry is complete and true (issue 29): every module under a `fast/`
is registered, names the reference it mirrors first in its docstring ("Mirrors: ..."), and each
mirrored reference and each agreement test exists."""

from __future__ import annotations

import ast
import importlib
from pathlib import Path

import pytest

from tests.engine.conformance.registry import FAST_PATHS, FastPath

ROOT = Path(__file__).resolve().parents[3]
ENGINE = ROOT / "scheduler_api" / "engine"


def fast_modules() -> set[str]:
    return {
        ".".join(path.relative_to(ROOT).with_suffix("").parts)
        for path in ENGINE.glob("*/fast/*.py")
        if path.name != "__init__.py"
    }


def test_every_fast_module_is_registered_and_nothing_else() -> None:
    registered = [entry.module for entry in FAST_PATHS]
    assert len(registered) == len(set(registered)), "a module registered twice"
    assert fast_modules() - set(registered) == set(), "a fast path without its reference"
    assert set(registered) - fast_modules() == set(), "a registered module that is gone"


@pytest.mark.parametrize("entry", FAST_PATHS, ids=lambda entry: entry.module.split("engine.")[1])
def test_each_fast_path_names_its_reference_first(entry: FastPath) -> None:
    doc = importlib.import_module(entry.module).__doc__ or ""
    first = " ".join(doc.strip().split("\n\n")[0].split())  # the first paragraph
    assert first.startswith("Mirrors: "), (entry.module, first)
    for reference in entry.mirrors:
        short = reference.removeprefix("scheduler_api.engine.")
        assert short in first, (entry.module, short, first)


@pytest.mark.parametrize("entry", FAST_PATHS, ids=lambda entry: entry.module.split("engine.")[1])
def test_each_mirrored_reference_and_agreement_test_exists(entry: FastPath) -> None:
    for reference in entry.mirrors:
        assert resolve(reference) is not None, reference
    for test in entry.agreement:
        file, _, name = test.partition("::")
        tree = ast.parse((ROOT / file).read_text())
        names = {n.name for n in tree.body if isinstance(n, ast.FunctionDef)}
        assert name in names, test


def resolve(dotted: str) -> object:
    """The object a dotted name points at (module, then attributes)."""
    parts = dotted.split(".")
    for cut in range(len(parts), 0, -1):
        try:
            found: object = importlib.import_module(".".join(parts[:cut]))
        except ModuleNotFoundError:
            continue
        for attribute in parts[cut:]:
            found = getattr(found, attribute)
        return found
    raise ModuleNotFoundError(dotted)
