"""Requests whose path or query holds a NUL character are refused before any view.

No Kubernetes name holds one, and PostgreSQL refuses to compare text with it: a `%00` in
a node name or filter would end in a database error (a 500) instead of a clear answer."""

from __future__ import annotations

from collections.abc import Callable

from django.http import HttpRequest, HttpResponse, HttpResponseBadRequest, JsonResponse

from scheduler_api.errors import error_body

MESSAGE = "The URL contains a NUL character (%00), which no name or filter can hold."


class RefuseNulMiddleware:
    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        query = request.GET
        if "\x00" in request.path or any(
            "\x00" in key or any("\x00" in value for value in query.getlist(key)) for key in query
        ):
            if request.path.startswith("/api/"):
                return JsonResponse(error_body(MESSAGE, {}), status=400)
            return HttpResponseBadRequest(MESSAGE, content_type="text/plain")
        return self.get_response(request)
