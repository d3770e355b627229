"""Typed access to a raw object's fields, with errors that name the field.

A `Reader` is bound to one object; every failure becomes an
`ObjectParseError` carrying the object's kind, name and the dotted field path.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any, TypeVar

from topology.parsers.errors import FieldError, ObjectParseError

T = TypeVar("T")
_MISSING = object()


class Reader:
    def __init__(self, obj: Any, kind: str) -> None:
        if not isinstance(obj, dict):
            raise ObjectParseError(kind, "", "<object>", "expected a JSON object")
        self.obj = obj
        self.kind = kind
        metadata = obj.get("metadata")
        name = metadata.get("name") if isinstance(metadata, dict) else None
        self.name = name if isinstance(name, str) else ""

    def error(self, field: str, message: str) -> ObjectParseError:
        return ObjectParseError(self.kind, self.name, field, message)

    def get(self, path: str, typ: type[T] | tuple[type, ...], default: Any = _MISSING) -> Any:
        """The value at a dotted path, checked against typ; default when absent or null."""
        value = self._walk(self.obj, path)
        if value is _MISSING or value is None:
            if default is _MISSING:
                raise self.error(path, "required field is missing")
            return default
        return self.check(path, value, typ)

    def check(self, path: str, value: Any, typ: type[T] | tuple[type, ...]) -> Any:
        if isinstance(value, bool) and typ in (int, float):
            raise self.error(path, f"expected {_type_name(typ)}, got a boolean")
        if not isinstance(value, typ):
            raise self.error(path, f"expected {_type_name(typ)}, got {type(value).__name__}")
        return value

    def convert(self, path: str, value: Any, parse: Callable[[Any], T]) -> T:
        """Run a value parser, turning its FieldError into an error naming the field."""
        try:
            return parse(value)
        except FieldError as exc:
            raise self.error(path, str(exc)) from None

    def json_field(self, path: str, text: Any) -> Any:
        """Decode a JSON-in-a-string field (annotations), naming line and column on failure."""
        if not isinstance(text, str):
            raise self.error(path, f"expected a JSON string, got {type(text).__name__}")
        try:
            return json.loads(text)
        except json.JSONDecodeError as exc:
            raise self.error(
                path, f"invalid JSON at line {exc.lineno} column {exc.colno}: {exc.msg}"
            ) from None

    def string_map(self, path: str) -> dict[str, str]:
        value = self.get(path, dict, default={})
        for key, item in value.items():
            if not isinstance(item, str):
                raise self.error(f"{path}.{key}", f"expected a string, got {type(item).__name__}")
        return dict(value)

    @staticmethod
    def _walk(obj: Any, path: str) -> Any:
        current = obj
        for part in path.split("."):
            if not isinstance(current, dict):
                return _MISSING
            current = current.get(part, _MISSING)
            if current is _MISSING:
                return _MISSING
        return current


def _type_name(typ: type | tuple[type, ...]) -> str:
    names = {
        dict: "an object",
        list: "a list",
        str: "a string",
        int: "an integer",
        bool: "a boolean",
    }
    if isinstance(typ, tuple):
        return " or ".join(names.get(t, t.__name__) for t in typ)
    return names.get(typ, typ.__name__)
