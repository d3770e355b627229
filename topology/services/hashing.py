"""A stable content hash of a parsed record: equal hash means nothing to write."""

from __future__ import annotations

import dataclasses
import hashlib
import json
from datetime import datetime
from typing import Any


def record_hash(record: Any) -> str:
    payload = json.dumps(
        dataclasses.asdict(record), sort_keys=True, default=_json_default, separators=(",", ":")
    )
    return hashlib.sha256(payload.encode()).hexdigest()


def _json_default(value: Any) -> Any:
    if isinstance(value, frozenset | set):
        return sorted(value)
    if isinstance(value, datetime):
        return value.isoformat()
    raise TypeError(f"cannot hash {type(value).__name__}")
