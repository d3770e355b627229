"""clusters: read by every role; created, described and deleted by admins."""

from __future__ import annotations

from typing import Any

from drf_spectacular.utils import extend_schema
from rest_framework import status, viewsets
from rest_framework.exceptions import MethodNotAllowed, NotFound
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.serializers import BaseSerializer

from scheduler_api.api.serializers.clusters import (
    ClusterCreateSerializer,
    ClusterSerializer,
    ClusterUpdateSerializer,
)
from scheduler_api.selectors.clusters import clusters_with_sync_state
from scheduler_api.services.clusters import cluster_create, cluster_delete, cluster_update
from topology.models import Cluster


class ClusterViewSet(viewsets.ModelViewSet):
    """Clusters with their node and pod counts, data age and sync state per collection."""

    queryset = Cluster.objects.none()
    permission_model = Cluster
    serializer_class = ClusterSerializer
    lookup_field = "name"
    lookup_url_kwarg = "cluster"
    http_method_names = ["get", "post", "patch", "delete", "head", "options"]

    def get_queryset(self) -> Any:
        return clusters_with_sync_state()

    def initial(self, request: Request, *args: Any, **kwargs: Any) -> None:
        """A method the resource does not offer (PUT) is a 405 for everyone, before roles
        are asked: as the schema, which lists no PUT, says."""
        if (request.method or "").lower() not in self.http_method_names:
            raise MethodNotAllowed(request.method or "")
        super().initial(request, *args, **kwargs)

    def get_serializer_class(self) -> type[BaseSerializer[Any]]:
        if self.action == "create":
            return ClusterCreateSerializer
        if self.action == "partial_update":
            return ClusterUpdateSerializer
        return ClusterSerializer

    def _read(self, name: str) -> dict[str, Any]:
        try:
            return ClusterSerializer(self.get_queryset().get(name=name)).data
        except Cluster.DoesNotExist:
            raise NotFound("The cluster was deleted meanwhile.") from None

    @extend_schema(request=ClusterCreateSerializer, responses={201: ClusterSerializer})
    def create(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        serializer = self.get_serializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        cluster = cluster_create(**serializer.validated_data)
        return Response(self._read(cluster.name), status=status.HTTP_201_CREATED)

    @extend_schema(request=ClusterUpdateSerializer, responses={200: ClusterSerializer})
    def partial_update(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        cluster = self.get_object()
        serializer = self.get_serializer(data=request.data, partial=True)
        serializer.is_valid(raise_exception=True)
        try:
            cluster_update(cluster=cluster, **serializer.validated_data)
        except Cluster.DoesNotExist:
            raise NotFound("The cluster was deleted meanwhile.") from None
        return Response(self._read(cluster.name))

    def destroy(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        cluster_delete(cluster=self.get_object())
        return Response(status=status.HTTP_204_NO_CONTENT)
