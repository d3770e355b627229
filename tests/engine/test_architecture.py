"""The engine is pure Python: it imports with no Django settings and pulls in no Django."""

from __future__ import annotations

import ast
import os
import pkgutil
import subprocess
import sys
from pathlib import Path

import scheduler_api.engine as engine

ROOT = Path(__file__).resolve().parents[2]


def engine_modules() -> list[str]:
    found = pkgutil.walk_packages(engine.__path__, prefix="scheduler_api.engine.")
    return sorted(m.name for m in found)


def test_every_engine_module_imports_without_django():
    modules = engine_modules()
    assert "scheduler_api.engine.kubelet.reference.topologymanager" in modules
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


# --- import rules (issue 29) ----------------------------------------------------------

ENGINE = ROOT / "scheduler_api" / "engine"
FAMILIES = {"kubelet", "schedulerplugins", "crane", "koordinator"}
# Edges between families (or from a family to the what-if orchestrator) that the tree
# still has: each is debt, to be moved into `model/` or behind the family registry. The
# list may only shrink: a new edge fails, and so does an edge that is gone but listed.
KNOWN_CROSSINGS = {
    ("crane.fast.vector", "schedulerplugins.fast.vector"),
    ("koordinator.fast.vector", "schedulerplugins.fast.vector"),
    ("kubelet.reference.node_config", "schedulerplugins.reference.common"),
    ("schedulerplugins.fast.vector", "koordinator.reference.state"),
    ("schedulerplugins.fast.vector", "kubelet.reference.node_config"),
    ("schedulerplugins.fast.vector", "kubelet.cache"),
}


def imports_of(path: Path) -> set[str]:
    """Every module a file imports, at the top or inside a function."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.add(node.module)
        elif isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
    return found


def engine_files() -> dict[str, Path]:
    return {
        ".".join(path.relative_to(ENGINE).with_suffix("").parts): path
        for path in ENGINE.rglob("*.py")
        if path.name != "__init__.py"
    }


def engine_edges() -> set[tuple[str, str]]:
    prefix = "scheduler_api.engine."
    return {
        (module, imported.removeprefix(prefix))
        for module, path in engine_files().items()
        for imported in imports_of(path)
        if imported.startswith(prefix)
    }


def test_a_reference_imports_no_fast_path_and_no_numpy():
    for module, path in engine_files().items():
        if ".reference." not in f".{module}.":
            continue
        imported = imports_of(path)
        assert "numpy" not in imported, module
        fast = {m for m in imported if ".fast." in f"{m}."}
        assert not fast, (module, fast)


KEEPING = {"threading", "weakref", "collections.OrderedDict"}  # what a cache keeps entries with


def imported_names(path: Path) -> set[str]:
    """Every module imported, and every `module.name` imported from one."""
    names = set(imports_of(path))
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.module:
            names.update(f"{node.module}.{alias.name}" for alias in node.names)
    return names


def test_a_reference_keeps_nothing_between_questions():
    """Caches live in each family's `cache` module (and `whatif.cache`), never in a
    reference: no cache imported, no lock, ordered dict or weak reference to keep
    entries with, no view kept on a snapshot node (`NodeSnapshot.derived`). A
    value-keyed `lru_cache` on a pure function stays allowed: its key is the whole
    input, so it cannot serve an answer of another question."""
    for module, path in engine_files().items():
        if ".reference." not in f".{module}.":
            continue
        imported = imported_names(path)
        assert not {m for m in imported if "cache" in m.split(".")}, module
        assert not imported & KEEPING, (module, imported & KEEPING)
        assert ".derived(" not in path.read_text(), module


def test_caches_are_where_the_readme_says():
    kept = sorted(m for m in engine_files() if m.split(".")[-1] == "cache")
    assert kept == ["crane.cache", "koordinator.cache", "kubelet.cache", "whatif.cache"]


def test_families_import_only_themselves_and_the_model():
    crossings = {
        (module, imported)
        for module, imported in engine_edges()
        if module.split(".")[0] in FAMILIES
        and imported.split(".")[0] not in (module.split(".")[0], "model")
    }
    assert crossings - KNOWN_CROSSINGS == set(), "a new crossing between families"
    assert KNOWN_CROSSINGS - crossings == set(), "a crossing is gone: strike it from the list"


def test_the_model_imports_nothing_of_the_families_or_the_whatif():
    for module, imported in engine_edges():
        if module.startswith("model."):
            assert imported.startswith("model."), (module, imported)


def test_the_rest_of_topolens_enters_the_engine_by_its_front_door():
    """`topology` and the API's layers import only names `scheduler_api.engine` exports."""
    exported = set(engine.__all__)
    for base in (
        "topology",
        "scheduler_api/api",
        "scheduler_api/services",
        "scheduler_api/selectors",
        "webapp",
    ):
        for path in (ROOT / base).rglob("*.py"):
            for node in ast.walk(ast.parse(path.read_text())):
                if not isinstance(node, ast.ImportFrom) or not node.module:
                    continue
                if node.module.startswith("scheduler_api.engine."):
                    raise AssertionError(f"{path}: imports {node.module}, not the front door")
                if node.module == "scheduler_api.engine":
                    names = {alias.name for alias in node.names}
                    assert names <= exported, (path, names - exported)
