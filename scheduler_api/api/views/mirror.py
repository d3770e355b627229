"""Read-only lists of a cluster's mirror: pods, reservations, node reservations, policies."""

from __future__ import annotations

from typing import Any

from django.shortcuts import get_object_or_404
from drf_spectacular.utils import extend_schema
from rest_framework import generics, viewsets

from scheduler_api.api.filtersets import (
    NodePolicyFilterSet,
    NodeReservationFilterSet,
    PodFilterSet,
    ReservationFilterSet,
)
from scheduler_api.api.serializers.pods import PodSerializer
from scheduler_api.api.serializers.policies import NodePolicySerializer
from scheduler_api.api.serializers.reservations import (
    NodeReservationSerializer,
    ReservationSerializer,
)
from scheduler_api.api.views.base import CLUSTER_PARAMETER, ClusterScopedMixin
from scheduler_api.selectors.mirror import (
    node_policies_of,
    node_reservations_of,
    pods_of,
    reservations_of,
)
from topology.models import Cluster, NodeCPUReservation, NodePolicy, Pod, Reservation


@extend_schema(parameters=[CLUSTER_PARAMETER], summary="List pods", tags=["pods"])
class PodListView(ClusterScopedMixin, generics.ListAPIView):
    queryset = Pod.objects.all()
    permission_model = Pod
    serializer_class = PodSerializer
    filterset_class = PodFilterSet

    def cluster_queryset(self, cluster: Cluster) -> Any:
        return pods_of(cluster)


@extend_schema(parameters=[CLUSTER_PARAMETER], summary="One pod", tags=["pods"])
class PodDetailView(ClusterScopedMixin, generics.RetrieveAPIView):
    queryset = Pod.objects.all()
    permission_model = Pod
    serializer_class = PodSerializer
    filter_backends: list[Any] = []

    def cluster_queryset(self, cluster: Cluster) -> Any:
        return pods_of(cluster)

    def get_object(self) -> Pod:
        return get_object_or_404(
            self.get_queryset(), namespace=self.kwargs["namespace"], name=self.kwargs["name"]
        )


@extend_schema(parameters=[CLUSTER_PARAMETER], tags=["reservations"])
class ReservationViewSet(ClusterScopedMixin, viewsets.ReadOnlyModelViewSet):
    """Koordinator Reservation objects."""

    queryset = Reservation.objects.all()
    permission_model = Reservation
    serializer_class = ReservationSerializer
    filterset_class = ReservationFilterSet
    lookup_field = "name"
    lookup_url_kwarg = "reservation"
    lookup_value_regex = "[^/]+"

    def cluster_queryset(self, cluster: Cluster) -> Any:
        return reservations_of(cluster)


@extend_schema(parameters=[CLUSTER_PARAMETER], tags=["reservations"])
class NodeReservationViewSet(ClusterScopedMixin, viewsets.ReadOnlyModelViewSet):
    """The node.koordinator.sh/reservation annotation of each node that carries one."""

    queryset = NodeCPUReservation.objects.all()
    permission_model = NodeCPUReservation
    serializer_class = NodeReservationSerializer
    filterset_class = NodeReservationFilterSet
    lookup_field = "node__name"
    lookup_url_kwarg = "node"
    lookup_value_regex = "[^/]+"  # node names have dots

    def cluster_queryset(self, cluster: Cluster) -> Any:
        return node_reservations_of(cluster)


@extend_schema(parameters=[CLUSTER_PARAMETER], tags=["policies"])
class NodePolicyViewSet(ClusterScopedMixin, viewsets.ReadOnlyModelViewSet):
    """Desired node policies (what admins want; kept apart from what was observed)."""

    queryset = NodePolicy.objects.all()
    permission_model = NodePolicy
    serializer_class = NodePolicySerializer
    filterset_class = NodePolicyFilterSet
    lookup_field = "node__name"
    lookup_url_kwarg = "node"
    lookup_value_regex = "[^/]+"  # node names have dots

    def cluster_queryset(self, cluster: Cluster) -> Any:
        return node_policies_of(cluster)
