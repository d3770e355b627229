"""The API's JSON parser: DRF's, plus the paths of keys an object repeats.

`json` keeps the last value of a repeated key and says nothing, so `{"replicas": 1, ...,
"replicas": 50}` would quietly run fifty. The Kubernetes API server reports repeated
fields under `fieldValidation` as it does unknown ones; so do we
(`scheduler_api.api.field_validation`).
"""

from __future__ import annotations

import codecs
from typing import Any

from rest_framework.exceptions import ParseError
from rest_framework.parsers import JSONParser, get_encoding
from rest_framework.utils import json

from scheduler_api.api.field_validation import record_duplicated_fields
from scheduler_api.errors import field_path
from topology.parsers.nesting import MAX_NESTING, TooDeep, check_nesting


class RepeatedKeys:
    """An `object_pairs_hook` that builds plain dicts and remembers which repeat a key."""

    def __init__(self) -> None:
        # id → (the dict, kept alive so that its id is not reused; its repeated keys)
        self.found: dict[int, tuple[dict[str, Any], list[str]]] = {}

    def __call__(self, pairs: list[tuple[str, Any]]) -> dict[str, Any]:
        result: dict[str, Any] = {}
        for key, value in pairs:
            if key in result:
                self.found.setdefault(id(result), (result, []))[1].append(key)
            result[key] = value
        return result

    def paths(self, data: Any) -> list[str]:
        """Dotted paths of the repeated keys in `data` (the last value of a key won, so a
        repeat inside a value that lost is not in it, and not named)."""
        if not self.found:
            return []
        paths: list[str] = []
        self._walk(data, "", paths)
        return paths

    def _walk(self, node: Any, path: str, paths: list[str]) -> None:
        if isinstance(node, dict):
            if id(node) in self.found:
                paths.extend(field_path(path, key) for key in self.found[id(node)][1])
            for key, value in node.items():
                self._walk(value, field_path(path, key), paths)
        elif isinstance(node, list):
            for index, item in enumerate(node):
                self._walk(item, field_path(path, str(index)), paths)


class DuplicateAwareJSONParser(JSONParser):
    """DRF's JSONParser (same decoding, same strict constants, same errors) that records
    the paths of repeated keys on the request."""

    def parse(self, stream: Any, media_type: str | None = None, parser_context: Any = None) -> Any:
        parser_context = parser_context or {}
        hook = RepeatedKeys()
        try:
            decoded_stream = codecs.getreader(get_encoding(parser_context))(stream)
            parse_constant = json.strict_constant if self.strict else None
            data = json.load(decoded_stream, parse_constant=parse_constant, object_pairs_hook=hook)
            check_nesting(data, refuse_nul=True)  # PostgreSQL stores no NUL
        except RecursionError:
            raise ParseError(f"JSON parse error - {TooDeep(MAX_NESTING)}") from None
        except ValueError as exc:  # TooDeep included
            raise ParseError(f"JSON parse error - {exc}") from exc
        repeated = hook.paths(data)
        if repeated and "request" in parser_context:
            record_duplicated_fields(parser_context["request"], repeated)
        return data
