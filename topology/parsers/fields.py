"""Typed access to a raw object's fields, with errors that name the field.

A `Reader` is bound to one object; every failure becomes an
`ObjectParseError` carrying the object's kind, name and the dotted field path.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable
from functools import lru_cache
from typing import Any, TypeVar

from topology.parsers.errors import FieldError, ObjectParseError

T = TypeVar("T")
_MISSING = object()
logger = logging.getLogger(__name__)


def read_or_ignore(read: Callable[[], T], upstream: str) -> T | None:
    """`read()`, or None with a warning naming the field when it is malformed: for an
    annotation the upstream component ignores rather than refuse its object (so the
    object, and all else it tells, stays in the mirror)."""
    try:
        return read()
    except ObjectParseError as exc:
        logger.warning("%s (ignored, as %s ignores it)", exc, upstream)
        return None


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
        if type(value) is typ:  # as in `check`, without the call
            return value
        return self.present_or_default(path, value, typ, default)

    def present_or_default(
        self, path: str, value: Any, typ: type[T] | tuple[type, ...], default: Any = _MISSING
    ) -> Any:
        """A value read at `path` (_MISSING if absent), checked; default when absent or null."""
        if value is _MISSING or value is None:
            if default is _MISSING:
                raise self.error(path, "required field is missing")
            return default
        return self.check(path, value, typ)

    def at(self, key: str) -> Section:
        """The object under a top-level key (`metadata`, `spec`), to read several of its
        fields without walking the path for each; absent or not an object, it has none."""
        value = self.obj.get(key)
        return Section(self, key, value if isinstance(value, dict) else {})

    def check(self, path: str, value: Any, typ: type[T] | tuple[type, ...]) -> Any:
        if type(value) is typ:  # the common case, decided at once (a bool is not an int)
            return value
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
        for part in _parts(path):
            if not isinstance(current, dict):  # _MISSING included
                return _MISSING
            current = current.get(part, _MISSING)
        return current


class Section:
    """Fields of one object within a Reader's, read and checked as `Reader.get` and
    `Reader.string_map` read them; an error names the field's full path. A pod parse
    reads 15 fields of metadata, spec and status: this spares it the paths."""

    __slots__ = ("_fields", "path", "reader")

    def __init__(self, reader: Reader, path: str, fields: dict[str, Any]) -> None:
        self.reader = reader
        self.path = path
        self._fields = fields

    def get(self, key: str, typ: type[T] | tuple[type, ...], default: Any = _MISSING) -> Any:
        value = self._fields.get(key)
        if type(value) is typ or (value is None and default is not _MISSING):
            return value if value is not None else default
        return self.reader.present_or_default(f"{self.path}.{key}", value, typ, default)

    def string_map(self, key: str) -> dict[str, str]:
        value = self._fields.get(key)
        if value is None:
            return {}
        if type(value) is not dict:
            return self.reader.string_map(f"{self.path}.{key}")  # it names what is wrong
        for item in value.values():
            if type(item) is not str:
                return self.reader.string_map(f"{self.path}.{key}")
        return dict(value)


@lru_cache(maxsize=512)
def _parts(path: str) -> tuple[str, ...]:
    """A dotted path's keys; parsers read the same few dozen paths of every object."""
    return tuple(path.split("."))


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
