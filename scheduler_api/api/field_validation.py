"""Unknown fields in a request body: warned of, refused or ignored, as the Kubernetes API
server does with its `fieldValidation` query parameter.

DRF drops the keys a serializer has no field for. A typo in an optional field then goes
unnoticed: `{"capacty": false}` runs the what-if with the capacity counted, and a
container's `"request"` (for `requests`) makes a BestEffort pod. A key written twice is
as quiet: the last value wins. Both are reported here (repeated keys are found by the
JSON parser, `scheduler_api.api.parsers`). Like the Kubernetes API
server, we warn by default (a `Warning: 299 - "unknown field \\"…\\""` response header, which
kubectl and client-go print), refuse with `?fieldValidation=Strict` (a 400 naming each
unknown or repeated field) and stay silent with `?fieldValidation=Ignore`.

Free-form maps (labels, annotations, quantities, a Pod manifest in `pod`) are not
checked: any key is valid there. Read-only fields count as known, so a body copied from
a GET is not warned about.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from enum import StrEnum
from typing import Any

from django.http import HttpRequest, HttpResponse
from rest_framework import serializers
from rest_framework.fields import empty

from scheduler_api.errors import field_path

FIELD_VALIDATION = "fieldValidation"
UNKNOWN_FIELD = "Unknown field."
DUPLICATE_FIELD = "Duplicate field."
WARNING_HEADER = "Warning"
MAX_WARNINGS = 20  # more are summed up in one last warning
MAX_PATH_CHARS = 200
# Attributes of the Django request (DRF's Request wraps it, and middleware sees it).
_RECORDED = "api_warnings"
_DUPLICATED = "api_duplicated_fields"  # set by the JSON parser (`scheduler_api.api.parsers`)


class FieldValidation(StrEnum):
    IGNORE = "Ignore"
    WARN = "Warn"
    STRICT = "Strict"


DEFAULT_FIELD_VALIDATION = FieldValidation.WARN


def field_validation_of(request: Any) -> FieldValidation:
    """The request's `fieldValidation` (default Warn); a 400 naming it when it is none of
    the three (spelt as Kubernetes spells them)."""
    raw = request.query_params.get(FIELD_VALIDATION)
    if raw is None:
        return DEFAULT_FIELD_VALIDATION
    try:
        return FieldValidation(raw)
    except ValueError:
        choices = ", ".join(mode.value for mode in FieldValidation)
        raise serializers.ValidationError(
            {FIELD_VALIDATION: [f"Must be one of {choices}; got {raw!r}."]}
        ) from None


def unknown_fields(field: serializers.Field, data: Any, path: str = "") -> list[str]:
    """Dotted paths ("containers.0.request") of the keys in `data` that `field` (a
    serializer, or a list of them) has no field for, nested serializers included."""
    if isinstance(field, serializers.ListSerializer | serializers.ListField):
        if not isinstance(data, list):
            return []
        return [
            found
            for index, item in enumerate(data)
            for found in unknown_fields(field.child, item, field_path(path, str(index)))
        ]
    if not isinstance(field, serializers.Serializer) or not isinstance(data, Mapping):
        return []  # a scalar, or a free-form map: any key is valid
    found: list[str] = []
    for key, value in data.items():
        known = field.fields.get(key)
        if known is None:
            found.append(field_path(path, str(key)))
        elif not known.read_only:
            found.extend(unknown_fields(known, value, field_path(path, str(key))))
    return found


class KnownFieldsMixin:
    """For a serializer that reads a request body: its unknown keys are warned of,
    refused or ignored, as the request's `fieldValidation` asks.

    Only the outermost serializer looks, and only when it was given the request in its
    context (a view's `get_serializer`, or `context=self.get_serializer_context()`).
    """

    parent: Any
    context: dict[str, Any]

    def run_validation(self, data: Any = empty) -> Any:
        request = self.context.get("request") if self.parent is None else None
        if request is None or data is empty:
            return super().run_validation(data)  # type: ignore[misc]
        mode = field_validation_of(request)
        found = {} if mode is FieldValidation.IGNORE else self._field_problems(request, data)
        if found and mode is FieldValidation.STRICT:
            raise serializers.ValidationError(self._with_other_errors(data, found))
        if found:
            record_warnings(request, field_warnings(found))
        return super().run_validation(data)  # type: ignore[misc]

    def _field_problems(self, request: Any, data: Any) -> dict[str, list[str]]:
        """Path → messages: keys this serializer does not know, and keys the body repeats."""
        found: dict[str, list[str]] = {}
        for path in unknown_fields(self, data):  # type: ignore[arg-type]
            found.setdefault(path, []).append(UNKNOWN_FIELD)
        for path in duplicated_fields(request):
            found.setdefault(path, []).append(DUPLICATE_FIELD)
        return found

    def _with_other_errors(self, data: Any, found: dict[str, list[str]]) -> dict[str, Any]:
        """Strict: the unknown and repeated fields and every other error of the body, in
        one answer."""
        errors: dict[str, Any] = dict(found)
        try:
            super().run_validation(data)  # type: ignore[misc]
        except serializers.ValidationError as exc:
            detail = exc.detail
            other = detail if isinstance(detail, Mapping) else {"non_field_errors": detail}
            errors = {**other, **errors}
        return errors


_WARNING_KINDS = {UNKNOWN_FIELD: "unknown", DUPLICATE_FIELD: "duplicate"}


def field_warnings(found: dict[str, list[str]]) -> list[str]:
    return [
        field_warning(path, _WARNING_KINDS[message])
        for path, messages in found.items()
        for message in messages
    ]


def field_warning(path: str, kind: str = "unknown") -> str:
    """`unknown field "<path>"` (or `duplicate field`), as the Kubernetes API server words
    it; the path is JSON-escaped (a key may hold quotes or control characters), cut short."""
    shown = json.dumps(path[:MAX_PATH_CHARS])[1:-1]
    ellipsis = "..." if len(path) > MAX_PATH_CHARS else ""
    return f'{kind} field "{shown}{ellipsis}"'


def record_duplicated_fields(request: Any, paths: list[str]) -> None:
    setattr(_django_request(request), _DUPLICATED, list(paths))


def duplicated_fields(request: Any) -> list[str]:
    """Paths of the keys the request's JSON body repeats (the parser found them)."""
    return list(getattr(_django_request(request), _DUPLICATED, []))


def record_warnings(request: Any, warnings: list[str]) -> None:
    """Keep warnings for the response's Warning header (`WarningHeaderMiddleware`)."""
    http_request = _django_request(request)
    recorded: list[str] = getattr(http_request, _RECORDED, [])
    setattr(http_request, _RECORDED, [*recorded, *warnings])


def _django_request(request: Any) -> HttpRequest:
    """DRF's Request wraps Django's, which is the one middleware sees."""
    return getattr(request, "_request", request)  # type: ignore[no-any-return]


def warning_header(warnings: list[str]) -> str:
    """RFC 7234 warn-values, code 299 (miscellaneous persistent warning), comma-joined
    as one header, the way Kubernetes clients read them."""
    shown = warnings[:MAX_WARNINGS]
    if len(warnings) > MAX_WARNINGS:
        shown.append(f"{len(warnings) - MAX_WARNINGS} more warnings not listed")
    return ", ".join(f'299 - "{_quoted_string(text)}"' for text in shown)


def _quoted_string(text: str) -> str:
    escaped = text.replace("\\", "\\\\").replace('"', '\\"')
    return escaped.encode("ascii", "backslashreplace").decode("ascii")


class WarningHeaderMiddleware:
    """Writes the warnings recorded while answering a request into its `Warning` header."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        response = self.get_response(request)
        warnings = getattr(request, _RECORDED, None)
        if warnings:
            response.headers[WARNING_HEADER] = warning_header(warnings)
        return response
