"""JSON answers are never cached by a browser or a proxy: they hold one user's view of a
cluster (and tokens' owners' task results). Responses that set their own Cache-Control
(static files, the schema) keep it."""

from __future__ import annotations

from collections.abc import Callable

from django.http import HttpRequest, HttpResponse
from django.utils.cache import add_never_cache_headers


class NoStoreJSONMiddleware:
    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        response = self.get_response(request)
        is_json = response.get("Content-Type", "").startswith("application/json")
        if is_json and not response.has_header("Cache-Control"):
            add_never_cache_headers(response)
        return response
