"""Helpers for topology tests: sample objects by kind and name."""

from __future__ import annotations

import copy
import json
from typing import Any

from tests.conftest import sample_path


def sample_items(name: str) -> list[dict[str, Any]]:
    return json.loads(sample_path(name).read_text())["items"]


def find(items: list[dict[str, Any]], kind: str, name: str) -> dict[str, Any]:
    for item in items:
        if item["kind"] == kind and item["metadata"]["name"] == name:
            return copy.deepcopy(item)
    raise LookupError(f"{kind} {name}")


def first(items: list[dict[str, Any]], kind: str) -> dict[str, Any]:
    return copy.deepcopy(next(i for i in items if i["kind"] == kind))


# A Guaranteed pod of 2 CPUs and 1 GiB, as a what-if manifest.
WEB_POD: dict[str, Any] = {
    "metadata": {"name": "web"},
    "spec": {
        "containers": [
            {
                "name": "app",
                "resources": {
                    "requests": {"cpu": "2", "memory": "1Gi"},
                    "limits": {"cpu": "2", "memory": "1Gi"},
                },
            }
        ]
    },
}
