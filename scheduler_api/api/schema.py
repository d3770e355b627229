"""OpenAPI additions: the bearer-token scheme and the error responses every operation can give.

Imported by `scheduler_api.api.urls`, so drf-spectacular finds the extension whenever the
API is routed.
"""

from __future__ import annotations

from typing import Any

from drf_spectacular.extensions import OpenApiAuthenticationExtension
from drf_spectacular.plumbing import build_bearer_security_scheme_object

from scheduler_api.api.field_validation import (
    DEFAULT_FIELD_VALIDATION,
    FIELD_VALIDATION,
    WARNING_HEADER,
    FieldValidation,
)

ERROR_COMPONENT = "Error"
ERROR_REF = {"$ref": f"#/components/schemas/{ERROR_COMPONENT}"}
ERROR_SCHEMA: dict[str, Any] = {
    "type": "object",
    "description": "Every error: a sentence, plus messages per field for invalid input.",
    "properties": {
        "detail": {"type": "string"},
        "errors": {
            "type": "object",
            "additionalProperties": {"type": "array", "items": {"type": "string"}},
            "description": "field path (dotted for nested fields) → messages; {} otherwise",
        },
    },
    "required": ["detail", "errors"],
}
_DESCRIPTIONS = {
    "400": "Malformed request: `errors` names each field at fault.",
    "401": "No credentials, or a bad, expired or revoked token.",
    "403": "Your role does not allow this, or a CSRF check failed (session).",
    "404": "No such object.",
}
_WRITE_METHODS = {"post", "put", "patch"}
FIELD_VALIDATION_PARAMETER: dict[str, Any] = {
    "name": FIELD_VALIDATION,
    "in": "query",
    "required": False,
    "description": (
        "What to do with body fields this operation does not know (a typo, say) and with "
        "keys an object repeats (JSON keeps the last), as the Kubernetes API server does: "
        "`Warn` (default) answers as usual with a `Warning` header per such field; `Strict` "
        "refuses the request (400, each field named in `errors`); `Ignore` stays silent."
    ),
    "schema": {
        "type": "string",
        "enum": [mode.value for mode in FieldValidation],
        "default": DEFAULT_FIELD_VALIDATION.value,
    },
}
WARNING_HEADER_SCHEMA: dict[str, Any] = {
    "description": 'With `fieldValidation=Warn`: `299 - "unknown field \\"<path>\\""` '
    "or `duplicate field`, comma-separated, one per such body field (dotted path).",
    "schema": {"type": "string"},
}


class APITokenScheme(OpenApiAuthenticationExtension):  # type: ignore[no-untyped-call]
    target_class = "scheduler_api.api.authentication.APITokenAuthentication"
    name = "bearerAuth"

    def get_security_definition(self, auto_schema: Any) -> dict[str, Any]:
        scheme: dict[str, Any] = build_bearer_security_scheme_object(
            header_name="Authorization", token_prefix="Bearer"
        )
        scheme["description"] = (
            "An API token created in admin (shown once), sent as `Authorization: Bearer "
            "tl_…`. In Swagger UI's Authorize dialog paste the token alone: it adds `Bearer`."
        )
        return scheme


def add_error_responses(result: dict[str, Any], **kwargs: Any) -> dict[str, Any]:
    """A postprocessing hook: document 400/401/403/404 with the one error shape."""
    result.setdefault("components", {}).setdefault("schemas", {})[ERROR_COMPONENT] = ERROR_SCHEMA
    for operations in result.get("paths", {}).values():
        for method, operation in operations.items():
            for code in _error_codes(method, operation):
                operation["responses"].setdefault(code, _error_response(code))
    return result


def add_field_validation(result: dict[str, Any], **kwargs: Any) -> dict[str, Any]:
    """A postprocessing hook: every operation that reads a body takes `fieldValidation`
    and may answer a `Warning` header (see `scheduler_api.api.field_validation`)."""
    for operations in result.get("paths", {}).values():
        for operation in operations.values():
            if "requestBody" not in operation:
                continue
            operation.setdefault("parameters", []).append(FIELD_VALIDATION_PARAMETER)
            for code, response in operation["responses"].items():
                if code.startswith("2"):
                    response.setdefault("headers", {})[WARNING_HEADER] = WARNING_HEADER_SCHEMA
    return result


def _error_codes(method: str, operation: dict[str, Any]) -> list[str]:
    parameters = operation.get("parameters", [])
    codes = ["401", "403"]
    if method in _WRITE_METHODS or any(p.get("in") == "query" for p in parameters):
        codes.append("400")
    if any(p.get("in") == "path" for p in parameters) or "page" in {
        p.get("name") for p in parameters
    }:
        codes.append("404")
    return codes


def _error_response(code: str) -> dict[str, Any]:
    return {
        "description": _DESCRIPTIONS[code],
        "content": {"application/json": {"schema": ERROR_REF}},
    }
