"""clusters/{cluster}/export: the whole mirror as a Kubernetes List, streamed."""

from __future__ import annotations

from typing import Any

from django.http import StreamingHttpResponse
from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import generics
from rest_framework.request import Request

from scheduler_api.api.serializers.common import ErrorSerializer
from scheduler_api.api.serializers.export import KubernetesListSerializer
from scheduler_api.api.throttles import ExportThrottle
from scheduler_api.api.views.base import CLUSTER_PARAMETER, ClusterScopedMixin
from topology.models import Cluster
from topology.services.mirror.exporter import stream_list_json

EXPORT_PERMISSIONS = (
    "topology.view_cluster",
    "topology.view_node",
    "topology.view_nodetopology",
    "topology.view_pod",
    "topology.view_reservation",
    "topology.view_qosconfig",
)


class ExportView(ClusterScopedMixin, generics.GenericAPIView):
    queryset = Cluster.objects.all()
    required_permissions = {"GET": EXPORT_PERMISSIONS}
    throttle_classes = [ExportThrottle]
    pagination_class = None
    filter_backends: list[Any] = []

    @extend_schema(
        summary="Export a cluster's mirror",
        tags=["export"],
        description="The same Kubernetes v1 List as `manage.py export_snapshot`, streamed; "
        "`manage.py import_objects` reads it back into an equal mirror.",
        parameters=[CLUSTER_PARAMETER],
        responses={
            200: KubernetesListSerializer,
            429: OpenApiResponse(ErrorSerializer, "Too many exports; retry after Retry-After."),
        },
    )
    def get(self, request: Request, *args: Any, **kwargs: Any) -> StreamingHttpResponse:
        response = StreamingHttpResponse(
            stream_list_json(self.cluster), content_type="application/json"
        )
        response["Content-Disposition"] = f'inline; filename="{self.cluster.name}.json"'
        return response
