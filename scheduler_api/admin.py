"""Admin: API tokens (created with the text shown once, revoked) and what-if tasks (read-only)."""

from __future__ import annotations

from typing import Any

from django.contrib import admin, messages
from django.core.exceptions import PermissionDenied
from django.db.models import QuerySet
from django.http import HttpRequest, HttpResponse
from django.template.response import TemplateResponse

from scheduler_api.models import APIToken, WhatIfTask
from scheduler_api.services.tokens import TokenRefused, api_token_create, api_tokens_revoke

_SAVED_FIELDS = ("id", "prefix", "digest", "created_at")


@admin.register(APIToken)
class APITokenAdmin(admin.ModelAdmin):
    list_display = ["name", "user", "prefix", "created_at", "expires_at", "last_used_at", "status"]
    list_filter = ["created_at", "expires_at", "revoked_at"]
    list_select_related = ["user"]
    search_fields = ["name", "prefix", "user__username"]
    autocomplete_fields = ["user"]
    actions = ["revoke_tokens"]
    add_fields = ["user", "name", "expires_at"]
    shown_fields = [
        "user",
        "name",
        "prefix",
        "created_at",
        "expires_at",
        "revoked_at",
        "last_used_at",
    ]

    def get_fields(self, request: HttpRequest, obj: APIToken | None = None) -> list[str]:
        return self.add_fields if obj is None else self.shown_fields

    def get_form(
        self, request: HttpRequest, obj: Any = None, change: bool = False, **kwargs: Any
    ) -> Any:
        """Only a superuser picks whose token it is: anyone else issues their own."""
        form = super().get_form(request, obj, change=change, **kwargs)
        if obj is None and "user" in form.base_fields and not request.user.is_superuser:
            field = form.base_fields["user"]
            field.queryset = field.queryset.filter(pk=request.user.pk)
            field.initial = request.user.pk
            field.help_text = "your own: only a superuser issues tokens for other users"
        return form

    def get_readonly_fields(self, request: HttpRequest, obj: APIToken | None = None) -> list[str]:
        """A token never changes once issued: it is revoked instead."""
        return [] if obj is None else self.shown_fields

    @admin.display(description="status")
    def status(self, token: APIToken) -> str:
        if token.is_revoked:
            return "revoked"
        return "expired" if token.is_expired else "active"

    def save_model(self, request: HttpRequest, obj: APIToken, form: Any, change: bool) -> None:
        if change:
            return
        try:
            issued = api_token_create(
                user=obj.user, name=obj.name, expires_at=obj.expires_at, issued_by=request.user
            )
        except TokenRefused as refused:
            raise PermissionDenied(str(refused)) from None
        for field in _SAVED_FIELDS:
            setattr(obj, field, getattr(issued.token, field))
        obj._state.adding = False
        obj.plaintext = issued.plaintext  # shown by response_add, never stored

    def response_add(
        self, request: HttpRequest, obj: APIToken, post_url_continue: str | None = None
    ) -> HttpResponse:
        """Show the token's text on this page, once; it is never stored or shown again."""
        context = {
            **self.admin_site.each_context(request),
            "opts": self.opts,
            "token": obj,
            "plaintext": obj.plaintext,
            "title": "API token created",
        }
        return TemplateResponse(request, "admin/scheduler_api/apitoken/created.html", context)

    @admin.action(description="Revoke the selected tokens", permissions=["change"])
    def revoke_tokens(self, request: HttpRequest, queryset: QuerySet[APIToken]) -> None:
        revoked = api_tokens_revoke(tokens=queryset)
        self.message_user(request, f"Revoked {revoked} token(s).", messages.SUCCESS)


@admin.register(WhatIfTask)
class WhatIfTaskAdmin(admin.ModelAdmin):
    list_display = ["id", "user", "cluster", "state", "created_at", "finished_at"]
    list_filter = ["state", "cluster"]
    list_select_related = ["user", "cluster"]
    readonly_fields = [
        "id",
        "user",
        "cluster",
        "state",
        "request",
        "result",
        "error",
        "created_at",
        "started_at",
        "finished_at",
    ]

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False
