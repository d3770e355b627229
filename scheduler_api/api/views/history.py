"""clusters/{cluster}/history: the cluster's figures over time, JSON or CSV (issue 33)."""

from __future__ import annotations

import csv
import io
from datetime import timedelta
from typing import Any

from django.conf import settings
from django.http import HttpResponse
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework import generics
from rest_framework.exceptions import ValidationError
from rest_framework.negotiation import BaseContentNegotiation
from rest_framework.renderers import JSONRenderer
from rest_framework.request import Request
from rest_framework.response import Response

from scheduler_api.api.serializers.history import HistoryQuerySerializer, HistorySerializer
from scheduler_api.api.views.base import CLUSTER_PARAMETER, ClusterScopedMixin
from topology.access import PERMISSIONS, Action
from topology.models import Cluster, ClusterFigureSample
from topology.services.observability.history import (
    POLICIES,
    HistoryRange,
    HistoryRangeError,
    cluster_history,
)

CSV_COLUMNS = ("taken_at", "nodes", "zones", "free_cpus_total", "largest_free_block",
               "fragmentation")  # fmt: skip


class IgnoreFormatParameter(BaseContentNegotiation):
    """JSON whatever `format` says: the view writes the CSV itself for `format=csv`, and
    every error stays JSON (DRF would otherwise read `format` as a renderer's name)."""

    def select_parser(self, request: Request, parsers: Any) -> Any:
        return parsers[0] if parsers else None

    def select_renderer(self, request: Request, renderers: Any, format_suffix: Any = None) -> Any:
        return renderers[0], renderers[0].media_type


@extend_schema(
    summary="The cluster's figures over time",
    tags=["history"],
    parameters=[
        CLUSTER_PARAMETER,
        OpenApiParameter("from", OpenApiTypes.DATETIME, description="default: to - retention"),
        OpenApiParameter("to", OpenApiTypes.DATETIME, description="default: now"),
        OpenApiParameter("step", OpenApiTypes.INT, description="seconds, at least 300"),
        OpenApiParameter("format", OpenApiTypes.STR, enum=["json", "csv"]),
    ],
    responses={
        (200, "application/json"): OpenApiResponse(HistorySerializer, "the samples"),
        (200, "text/csv"): OpenApiResponse(OpenApiTypes.STR, "with format=csv: a row a sample"),
    },
)
class HistoryView(ClusterScopedMixin, generics.GenericAPIView):
    queryset = ClusterFigureSample.objects.all()
    renderer_classes = [JSONRenderer]
    content_negotiation_class = IgnoreFormatParameter
    required_permissions = {"GET": PERMISSIONS[Action.READ_NODES]}  # as the overview
    serializer_class = HistorySerializer
    pagination_class = None
    filter_backends: list[Any] = []

    def cluster_queryset(self, cluster: Cluster) -> Any:
        return ClusterFigureSample.objects.filter(cluster=cluster)

    def get(self, request: Request, *args: Any, **kwargs: Any) -> Any:
        query = HistoryQuerySerializer(data=request.query_params)
        query.is_valid(raise_exception=True)
        data = query.validated_data
        step = timedelta(seconds=data["step"]) if "step" in data else None
        try:
            when = HistoryRange.of(data.get("from"), data.get("to"), step)
        except HistoryRangeError as error:
            raise ValidationError(error.field_errors) from error
        samples = cluster_history(self.cluster, when)
        if data.get("format") == "csv":
            return _csv(self.cluster.name, samples)
        body = {
            "cluster": self.cluster.name,
            "step_seconds": int(when.step.total_seconds()),
            "retention_days": settings.TOPOLENS_HISTORY_DAYS,
            "samples": samples,
        }
        return Response(HistorySerializer(body).data)


def _csv(cluster: str, samples: list[dict[str, Any]]) -> HttpResponse:
    """One row a sample; the largest exclusive pod per policy as one column each."""
    out = io.StringIO()
    writer = csv.writer(out)
    writer.writerow([*CSV_COLUMNS, *(f"largest_pod_{policy}" for policy in POLICIES)])
    for sample in samples:
        row = [sample[column] for column in CSV_COLUMNS]
        row[0] = sample["taken_at"].isoformat()
        largest = sample["largest_pod_by_policy"]
        writer.writerow([*row, *(largest.get(policy, "") for policy in POLICIES)])
    response = HttpResponse(out.getvalue(), content_type="text/csv; charset=utf-8")
    response["Content-Disposition"] = f'attachment; filename="{cluster}-history.csv"'
    return response
