"""The API docs pages stay on this host: a Content-Security-Policy lets the browser load
nothing from elsewhere (Redoc's footer shows a logo from its CDN; it is simply not drawn)."""

from __future__ import annotations

from collections.abc import Callable
from functools import wraps
from typing import Any

from django.http import HttpRequest, HttpResponse

SAME_HOST_ONLY = "; ".join(
    [
        "default-src 'self'",
        "script-src 'self' 'unsafe-inline'",  # the pages start Redoc/Swagger inline
        "style-src 'self' 'unsafe-inline'",
        "img-src 'self' data: blob:",
        "font-src 'self' data:",
        "worker-src 'self' blob:",  # Redoc's search runs in a worker
        "connect-src 'self'",
    ]
)


def same_host_only(view: Callable[..., HttpResponse]) -> Callable[..., HttpResponse]:
    @wraps(view)
    def wrapped(request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        response = view(request, *args, **kwargs)
        response["Content-Security-Policy"] = SAME_HOST_ONLY
        return response

    return wrapped
