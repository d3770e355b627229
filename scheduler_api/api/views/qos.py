"""clusters/{cluster}/qos: the stored ConfigMap; qos/nodes: what it means on each node."""

from __future__ import annotations

from typing import Any

from django.http import Http404
from drf_spectacular.utils import extend_schema
from rest_framework import generics
from rest_framework.request import Request
from rest_framework.response import Response

from scheduler_api.api.filtersets import NodeFilterSet
from scheduler_api.api.serializers.qos import NodeQoSSerializer, StoredQoSSerializer
from scheduler_api.api.views.base import CLUSTER_PARAMETER, ClusterScopedMixin
from scheduler_api.selectors.qos import (
    StoredQoS,
    node_qos_views,
    qos_nodes,
    qos_strategies,
    stored_qos,
)
from topology.models import Cluster, Node, QoSConfig


@extend_schema(parameters=[CLUSTER_PARAMETER], summary="The stored QoS ConfigMap", tags=["qos"])
class StoredQoSView(ClusterScopedMixin, generics.RetrieveAPIView):
    """`slo-controller-config`, with resource-qos-config rendered as Koordinator reads it."""

    queryset = QoSConfig.objects.all()
    permission_model = QoSConfig
    serializer_class = StoredQoSSerializer
    filter_backends: list[Any] = []

    def get_object(self) -> StoredQoS:
        stored = stored_qos(self.cluster)
        if stored is None:
            raise Http404("This cluster has no QoS ConfigMap mirrored.")
        return stored


@extend_schema(
    parameters=[CLUSTER_PARAMETER], summary="Effective QoS and schemata per node", tags=["qos"]
)
class NodeQoSListView(ClusterScopedMixin, generics.ListAPIView):
    """For each Koordinator node: the strategy koordlet gets and the schemata it writes."""

    queryset = Node.objects.all()
    permission_model = QoSConfig
    serializer_class = NodeQoSSerializer
    filterset_class = NodeFilterSet

    def cluster_queryset(self, cluster: Cluster) -> Any:
        return qos_nodes(cluster)

    def list(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        page = self.paginate_queryset(self.filter_queryset(self.get_queryset()))
        views = node_qos_views(qos_strategies(self.cluster), list(page or []))
        return self.get_paginated_response(self.get_serializer(views, many=True).data)
