"""What every view under clusters/{cluster}/ shares."""

from __future__ import annotations

from functools import cached_property
from typing import Any

from django.db.models import QuerySet
from django.http import HttpRequest, JsonResponse
from django.shortcuts import get_object_or_404
from django.views.decorators.csrf import csrf_exempt
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter

from scheduler_api.errors import error_body
from topology.models import Cluster

CLUSTER_PARAMETER = OpenApiParameter(
    "cluster", OpenApiTypes.STR, OpenApiParameter.PATH, description="cluster name"
)
NODE_PARAMETER = OpenApiParameter(
    "node", OpenApiTypes.STR, OpenApiParameter.PATH, description="node name"
)


class ClusterScopedMixin:
    """The cluster comes from the URL by name (404 when unknown).

    Subclasses give `cluster_queryset(cluster)`; the schema generator, which calls
    `get_queryset()` without URL arguments, gets an empty queryset of `queryset`'s model.
    """

    kwargs: dict[str, Any]
    queryset: QuerySet[Any]

    @cached_property
    def cluster(self) -> Cluster:
        return get_object_or_404(Cluster, name=self.kwargs["cluster"])

    def get_queryset(self) -> QuerySet[Any]:
        if getattr(self, "swagger_fake_view", False):
            return self.queryset.none()
        return self.cluster_queryset(self.cluster)

    def cluster_queryset(self, cluster: Cluster) -> QuerySet[Any]:
        raise NotImplementedError


@csrf_exempt  # it changes nothing: an unsafe method gets the same JSON 404, not CSRF's page
def api_not_found(request: HttpRequest) -> JsonResponse:
    """A path no API route matches (e.g. a malformed task id), whatever the method."""
    return JsonResponse(error_body("Not found.", {}), status=404)
