"""Issue 29 §8: `topology.domain` holds pure rules (no Django, no models), and services are
grouped by feature (no module left loose beside the feature packages but the throttles)."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_domain_rules_are_pure() -> None:
    for path in (ROOT / "topology" / "domain").glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            modules = []
            if isinstance(node, ast.ImportFrom) and node.module:
                modules = [node.module]
            elif isinstance(node, ast.Import):
                modules = [alias.name for alias in node.names]
            for module in modules:
                assert not module.startswith(("django", "topology.models", "topology.services")), (
                    path.name,
                    module,
                )


def test_services_are_grouped_by_feature() -> None:
    services = ROOT / "topology" / "services"
    loose = {p.stem for p in services.glob("*.py")} - {"__init__", "rate_limits"}
    assert not loose, f"a service outside its feature package: {loose}"
    assert {p.name for p in services.iterdir() if p.is_dir() and p.name != "__pycache__"} == {
        "mirror",
        "whatif",
        "policies",
        "sync",
        "diagnosis",
        "audit",
        "observability",
    }
