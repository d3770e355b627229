"""Role checks: each view names the Django permissions it needs, groups grant them.

A view either sets `required_permissions` (HTTP method → permission names) or a
`permission_model`, whose model permission follows the method (GET → view_…,
POST → add_…, PUT/PATCH → change_…, DELETE → delete_…). Anything else is refused.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from django.db.models import Model
from rest_framework.permissions import BasePermission
from rest_framework.request import Request

_MODEL_ACTIONS = {
    "GET": "view",
    "HEAD": "view",
    "OPTIONS": "view",
    "POST": "add",
    "PUT": "change",
    "PATCH": "change",
    "DELETE": "delete",
}


def model_permission(model: type[Model], action: str) -> str:
    return f"{model._meta.app_label}.{action}_{model._meta.model_name}"


def required_permissions(view: Any, method: str) -> Sequence[str] | None:
    """What the view needs for this method; None means the method is never allowed."""
    explicit: Mapping[str, Sequence[str]] | None = getattr(view, "required_permissions", None)
    if explicit is not None:
        return explicit.get(method) or (explicit.get("GET") if method == "HEAD" else None)
    model = getattr(view, "permission_model", None)
    action = _MODEL_ACTIONS.get(method)
    if model is None or action is None:
        return None
    return (model_permission(model, action),)


class RolePermission(BasePermission):
    """Anonymous → 401 (DRF raises NotAuthenticated); a role without the permission → 403."""

    message = "Your role does not allow this."

    def has_permission(self, request: Request, view: Any) -> bool:
        user = request.user
        if not (user and user.is_authenticated):
            return False
        needed = required_permissions(view, request.method or "")
        if needed is None:
            return False
        if user.has_perms(needed):
            return True
        self.message = f"Your role does not allow this (it needs {', '.join(needed)})."
        return False
