"""clusters/{cluster}/nodes and nodes/{node}/topology."""

from __future__ import annotations

from typing import Any

from django.shortcuts import get_object_or_404
from drf_spectacular.utils import extend_schema, extend_schema_view
from rest_framework import generics, viewsets
from rest_framework.serializers import BaseSerializer

from scheduler_api.api.filtersets import NodeFilterSet
from scheduler_api.api.serializers.nodes import NodeDetailSerializer, NodeRowSerializer
from scheduler_api.api.serializers.topology import NodeTopologySerializer
from scheduler_api.api.views.base import CLUSTER_PARAMETER, NODE_PARAMETER, ClusterScopedMixin
from scheduler_api.selectors.nodes import (
    NodeTopologyData,
    node_details,
    node_rows,
    node_topology_view,
    nodes_with_topology,
)
from topology.models import Cluster, Node, NodeTopology


@extend_schema_view(
    list=extend_schema(
        summary="List nodes",
        description="Flat rows, read with values(); filter by name, labels, flavour, "
        "policy, scope and free exclusive CPUs in one zone.",
    ),
    retrieve=extend_schema(summary="One node in full"),
)
@extend_schema(parameters=[CLUSTER_PARAMETER], tags=["nodes"])
class NodeViewSet(ClusterScopedMixin, viewsets.ReadOnlyModelViewSet):
    queryset = Node.objects.all()
    permission_model = Node
    filterset_class = NodeFilterSet
    lookup_field = "name"
    lookup_url_kwarg = "node"
    lookup_value_regex = "[^/]+"  # node names have dots

    def cluster_queryset(self, cluster: Cluster) -> Any:
        return node_rows(cluster) if self.action == "list" else node_details(cluster)

    def get_serializer_class(self) -> type[BaseSerializer[Any]]:
        return NodeRowSerializer if self.action == "list" else NodeDetailSerializer


@extend_schema(
    parameters=[CLUSTER_PARAMETER, NODE_PARAMETER], summary="A node's NUMA topology", tags=["nodes"]
)
class NodeTopologyView(ClusterScopedMixin, generics.RetrieveAPIView):
    """Zones with resources and distances, each logical CPU with its state, the allocations."""

    queryset = Node.objects.all()
    permission_model = NodeTopology
    serializer_class = NodeTopologySerializer
    pagination_class = None
    filter_backends: list[Any] = []

    def cluster_queryset(self, cluster: Cluster) -> Any:
        return nodes_with_topology(cluster)

    def get_object(self) -> NodeTopologyData:
        return node_topology_view(get_object_or_404(self.get_queryset(), name=self.kwargs["node"]))
