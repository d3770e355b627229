"""Every API error has one shape: {"detail": "...", "errors": {field: [messages]}}."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from django.conf import settings
from django.core.exceptions import RequestDataTooBig
from rest_framework import exceptions
from rest_framework.response import Response
from rest_framework.views import exception_handler as drf_exception_handler

from scheduler_api.errors import INVALID_INPUT, error_body, field_path

NON_FIELD = "non_field_errors"


TOO_LARGE = (
    "The request body is larger than the API accepts ({limit} bytes); "
    "ask about fewer containers or resources, or split the question."
)


def exception_handler(exc: Exception, context: dict[str, Any]) -> Response | None:
    if isinstance(exc, RequestDataTooBig):  # Django's body limit, met while parsing
        limit = settings.DATA_UPLOAD_MAX_MEMORY_SIZE
        return Response(error_body(TOO_LARGE.format(limit=limit), {}), status=413)
    response = drf_exception_handler(exc, context)
    if response is None:
        return None  # not an API error: Django answers 500 and logs it
    if isinstance(exc, exceptions.ValidationError):
        response.data = error_body(INVALID_INPUT, flatten_errors(exc.detail))
    else:
        detail = response.data.get("detail") if isinstance(response.data, dict) else None
        response.data = error_body(str(detail or exc), {})
    return response


def flatten_errors(detail: Any, path: str = "") -> dict[str, list[str]]:
    """Nested serializer errors → dotted field paths ("containers.0.requests.cpu")."""
    if isinstance(detail, Mapping):
        result: dict[str, list[str]] = {}
        for key, value in detail.items():
            # A nested serializer's own errors belong to the field that holds it.
            child = (path or NON_FIELD) if key == NON_FIELD else field_path(path, str(key))
            for field, messages in flatten_errors(value, child).items():
                result.setdefault(field, []).extend(messages)
        return result
    if isinstance(detail, list) and any(isinstance(item, (dict, list)) for item in detail):
        result = {}
        for index, item in enumerate(detail):
            if item:
                for field, messages in flatten_errors(item, field_path(path, str(index))).items():
                    result.setdefault(field, []).extend(messages)
        return result
    messages = detail if isinstance(detail, list) else [detail]
    return {path or NON_FIELD: [str(message) for message in messages]}
