"""The API docs pages stay on this host: the site's Content-Security-Policy (settings,
django-csp) lets the browser load nothing from elsewhere (Redoc's footer shows a logo
from its CDN; it is simply not drawn). Swagger UI and Redoc start from inline scripts,
which these two pages alone are allowed."""

from __future__ import annotations

from collections.abc import Callable

from csp.constants import UNSAFE_INLINE
from csp.decorators import csp_update
from django.http import HttpResponse

same_host_only: Callable[[Callable[..., HttpResponse]], Callable[..., HttpResponse]] = csp_update(
    {"script-src": [UNSAFE_INLINE]}
)
