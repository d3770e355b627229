"""The one error shape of the API, also stored for a failed what-if task."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

INVALID_INPUT = "Invalid input."


def error_body(detail: str, errors: Mapping[str, list[str]]) -> dict[str, Any]:
    """{"detail": a sentence, "errors": {field path: [messages]}} ({} when no field is at fault)."""
    return {"detail": detail, "errors": {k: list(v) for k, v in errors.items()}}


def field_path(path: str, key: str) -> str:
    """The dotted path of `key` under `path` ("containers.0.requests"), as errors name fields."""
    return f"{path}.{key}" if path else key
