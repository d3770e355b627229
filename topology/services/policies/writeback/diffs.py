"""Before → after, as the audit shows it: flat `path: value` lines in a unified diff.

Pure: no Django. Label and annotation values can be long JSON strings (Koordinator's
node reservation annotation), so each key gets one line and a change reads as one
line removed and one added.
"""

from __future__ import annotations

import difflib
import json
from collections.abc import Mapping
from typing import Any


def merge_patch(target: Any, patch: Any) -> Any:
    """RFC 7386 JSON merge patch: maps merge, `None` deletes a key, anything else replaces."""
    if not isinstance(patch, Mapping):
        return patch
    result = dict(target) if isinstance(target, Mapping) else {}
    for key, value in patch.items():
        if value is None:
            result.pop(key, None)
        else:
            result[key] = merge_patch(result.get(key), value)
    return result


def flat_lines(prefix: str, mapping: Mapping[str, Any]) -> list[str]:
    """`prefix.key: value` per key, sorted; non-string values as compact JSON."""
    return [f"{prefix}.{key}: {_text(value)}" for key, value in sorted(mapping.items())]


def unified_diff(before: list[str], after: list[str], *, name: str) -> str:
    """A unified diff of two lists of lines; empty when they are equal."""
    lines = difflib.unified_diff(
        before, after, fromfile=f"{name} (cluster)", tofile=f"{name} (after apply)", lineterm=""
    )
    return "\n".join(lines)


def json_lines(obj: Any) -> list[str]:
    """An object as indented JSON lines with sorted keys: stable, so diffs are minimal."""
    return json.dumps(obj, indent=2, sort_keys=True, ensure_ascii=False).splitlines()


def _text(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value, sort_keys=True)
