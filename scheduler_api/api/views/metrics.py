"""/metrics: the Prometheus text format (`topology.services.observability.metrics`), for
any user with the viewer role, by API token (`Authorization: Bearer tl_…`) or session."""

from __future__ import annotations

from typing import Any

from django.http import HttpResponse
from drf_spectacular.utils import extend_schema
from prometheus_client import CONTENT_TYPE_LATEST
from rest_framework.request import Request
from rest_framework.views import APIView

from topology.access import PERMISSIONS, Action
from topology.services.observability.metrics import exposition


@extend_schema(exclude=True)  # not JSON: documented in the README
class MetricsView(APIView):
    required_permissions = {"GET": PERMISSIONS[Action.READ_METRICS]}
    throttle_classes: list[Any] = []

    def get(self, request: Request, *args: Any, **kwargs: Any) -> HttpResponse:
        gzipped = "gzip" in request.headers.get("Accept-Encoding", "")
        response = HttpResponse(exposition(gzipped=gzipped), content_type=CONTENT_TYPE_LATEST)
        if gzipped:
            response["Content-Encoding"] = "gzip"
        response["Vary"] = "Accept-Encoding"
        return response
