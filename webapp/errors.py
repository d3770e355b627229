"""The 500 answer: JSON in the API's one error shape under /api/, the plain page elsewhere.

Rendered without the database or a request context (either may be what failed)."""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse, JsonResponse
from django.views.defaults import server_error as page_server_error

from scheduler_api.errors import error_body

MESSAGE = "Topolens could not answer this request; the error is logged with its X-Request-ID."


def server_error(request: HttpRequest) -> HttpResponse:
    if request.path.startswith("/api/"):
        return JsonResponse(error_body(MESSAGE, {}), status=500)
    return page_server_error(request)
