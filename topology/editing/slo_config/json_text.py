"""JSON text in ConfigMap data: parse it as Go would accept it, print it, and diff it.

slo-controller decodes every data key with Go's encoding/json. Python's decoder is
laxer in two ways that matter here, and both are refused: the literals NaN /
Infinity, and numbers too large for a float (Go fails on both, and a failed decode
means slo-controller silently keeps its previous config).
"""

from __future__ import annotations

import difflib
import json
import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class JSONProblem:
    line: int
    column: int
    message: str


class _NotGoJSON(ValueError):
    pass


def _refuse_constant(name: str) -> Any:
    raise _NotGoJSON(f"{name} is not JSON")


def _finite_float(text: str) -> float:
    value = float(text)
    if math.isinf(value):
        raise _NotGoJSON(f"number {text} is out of range")
    return value


def parse_json(text: str) -> tuple[Any, JSONProblem | None]:
    """(value, None), or (None, the problem with its 1-based line and column)."""
    try:
        return (
            json.loads(text, parse_constant=_refuse_constant, parse_float=_finite_float),
            None,
        )
    except json.JSONDecodeError as exc:
        return None, JSONProblem(exc.lineno, exc.colno, exc.msg)
    except _NotGoJSON as exc:
        line, column = _position_of_constant(text, str(exc))
        return None, JSONProblem(line, column, str(exc))


def _position_of_constant(text: str, message: str) -> tuple[int, int]:
    """Where the offending literal is; json.loads does not say for these two cases."""
    token = message.split(" ")[1] if message.startswith("number ") else message.split(" ")[0]
    offset = _outside_strings(text, token)
    line = text.count("\n", 0, offset) + 1
    return line, offset - (text.rfind("\n", 0, offset) + 1) + 1


def _outside_strings(text: str, token: str) -> int:
    """Offset of the first `token` that is not inside a JSON string literal (0 if none)."""
    in_string = escaped = False
    for offset, char in enumerate(text):
        if in_string:
            if escaped:
                escaped = False
            elif char == "\\":
                escaped = True
            elif char == '"':
                in_string = False
        elif char == '"':
            in_string = True
        elif text.startswith(token, offset):
            return offset
    return 0


def dump_json(value: Any) -> str:
    """How Topolens writes JSON it rebuilt or edited: two-space indent, key order kept."""
    return json.dumps(value, indent=2, ensure_ascii=False)


def ordered(value: dict[str, Any], order: Iterable[str]) -> dict[str, Any]:
    """The same mapping with the named keys first, in that order; the rest keep theirs."""
    names = [key for key in order if key in value]
    return {
        **{key: value[key] for key in names},
        **{k: v for k, v in value.items() if k not in names},
    }


def _normalised_lines(text: str) -> list[str]:
    """Valid JSON is compared pretty-printed with sorted keys, so that only meaning shows."""
    value, problem = parse_json(text)
    if problem is not None:
        return text.splitlines(keepends=True)
    return (json.dumps(value, indent=2, sort_keys=True, ensure_ascii=False) + "\n").splitlines(
        keepends=True
    )


def data_diff(
    before: Mapping[str, str], after: Mapping[str, str], *, before_label: str, after_label: str
) -> str:
    """A unified diff per ConfigMap data key, before → after; "" when nothing changes.

    JSON values are diffed in a normal form (sorted keys, two-space indent): key order
    does not change what Koordinator reads. Text that is not JSON is diffed as is.
    """
    chunks: list[str] = []
    for key in sorted(set(before) | set(after)):
        old, new = before.get(key), after.get(key)
        if old == new:
            continue
        old_lines = _normalised_lines(old) if old is not None else []
        new_lines = _normalised_lines(new) if new is not None else []
        if old_lines == new_lines:
            continue
        chunks.extend(
            difflib.unified_diff(
                old_lines,
                new_lines,
                fromfile=f"{before_label}/{key}" if old is not None else "/dev/null",
                tofile=f"{after_label}/{key}" if new is not None else "/dev/null",
            )
        )
    return "".join(line if line.endswith("\n") else line + "\n" for line in chunks)
