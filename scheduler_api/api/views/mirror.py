"""A cluster's mirror, read-only (pods, reservations, node reservations); desired policies."""

from __future__ import annotations

from typing import Any

from django.shortcuts import get_object_or_404
from drf_spectacular.utils import OpenApiResponse, extend_schema, extend_schema_view
from rest_framework import generics, mixins, viewsets
from rest_framework.decorators import action
from rest_framework.exceptions import ValidationError
from rest_framework.request import Request
from rest_framework.response import Response

from scheduler_api.api.filtersets import (
    NodePolicyFilterSet,
    NodeReservationFilterSet,
    PodFilterSet,
    ReservationFilterSet,
)
from scheduler_api.api.serializers.common import ErrorSerializer
from scheduler_api.api.serializers.pods import PodSerializer
from scheduler_api.api.serializers.policies import (
    NodePolicyDiffSerializer,
    NodePolicySavedSerializer,
    NodePolicySerializer,
    PolicyPreviewInputSerializer,
    PolicyPreviewSerializer,
)
from scheduler_api.api.serializers.reservations import (
    NodeReservationSerializer,
    ReservationSerializer,
)
from scheduler_api.api.throttles import WhatIfThrottle
from scheduler_api.api.views.apply import ReservationCreateMixin
from scheduler_api.api.views.base import CLUSTER_PARAMETER, ClusterScopedMixin
from scheduler_api.selectors.mirror import (
    node_policies_of,
    node_reservations_of,
    pods_of,
    reservations_of,
)
from topology.models import Cluster, Node, NodeCPUReservation, NodePolicy, Pod, Reservation
from topology.services.policies.node_policies import (
    NodePolicyError,
    node_policy_review,
    node_policy_save,
)
from topology.services.policies.preview import PreviewInputError, preview_saved_policies
from topology.services.whatif.service import WhatIfInputError


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
class ReservationViewSet(ReservationCreateMixin, ClusterScopedMixin, viewsets.ReadOnlyModelViewSet):
    """Koordinator Reservation objects; POST creates one from a what-if (see the mixin)."""

    queryset = Reservation.objects.all()
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


RUN_WHATIF = "scheduler_api.run_whatif"
VIEW_POLICY = "topology.view_nodepolicy"


def api_field_errors(field_errors: dict[str, list[str]]) -> dict[str, list[str]]:
    """A service's per-field errors in the API's shape (non-field errors under their key)."""
    return {("non_field_errors" if k == "__all__" else k): v for k, v in field_errors.items()}


@extend_schema_view(
    list=extend_schema(summary="List desired node policies"),
    retrieve=extend_schema(summary="One node's desired policy"),
    update=extend_schema(
        summary="Set a node's desired policy (creates it; omitted fields: leave as observed)",
        request=NodePolicySerializer,
        responses={200: NodePolicySavedSerializer},
    ),
    partial_update=extend_schema(
        summary="Change some fields of a node's desired policy (creates it if needed)",
        request=NodePolicySerializer,
        responses={200: NodePolicySavedSerializer},
    ),
    destroy=extend_schema(summary="Discard a node's desired policy"),
    diff=extend_schema(
        summary="Observed against desired, the exact patch, and the policy's issues",
        responses={200: NodePolicyDiffSerializer},
    ),
    preview=extend_schema(
        summary="Which nodes gain or lose reference pods if the drafts were applied",
        request=PolicyPreviewInputSerializer,
        responses={
            200: PolicyPreviewSerializer,
            429: OpenApiResponse(ErrorSerializer, "Too many previews; retry after Retry-After."),
        },
    ),
)
@extend_schema(parameters=[CLUSTER_PARAMETER], tags=["policies"])
class NodePolicyViewSet(
    ClusterScopedMixin,
    mixins.ListModelMixin,
    mixins.RetrieveModelMixin,
    mixins.DestroyModelMixin,
    viewsets.GenericViewSet,
):
    """Desired node policies (what admins want; kept apart from what was observed).

    Editing is validated like admin: an error is a 400 and saves nothing; warnings
    come back with the saved policy. Applying to the cluster is a separate, admin-only step.
    """

    queryset = NodePolicy.objects.all()
    permission_model = NodePolicy
    serializer_class = NodePolicySerializer
    filterset_class = NodePolicyFilterSet
    lookup_field = "node__name"
    lookup_url_kwarg = "node"
    lookup_value_regex = "[^/]+"  # node names have dots

    @property
    def required_permissions(self) -> dict[str, tuple[str, ...]] | None:
        """The preview runs the engine: what-if's permission; the rest follow the model."""
        if getattr(self, "action", None) == "preview":
            return {"POST": (RUN_WHATIF, VIEW_POLICY)}
        return None

    def get_throttles(self) -> list[Any]:
        return [WhatIfThrottle()] if self.action == "preview" else super().get_throttles()

    def cluster_queryset(self, cluster: Cluster) -> Any:
        return node_policies_of(cluster)

    def retrieve(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        """A node without a desired policy answers its starting point (`draft: false`,
        every field left as observed); only a node that does not exist is a 404."""
        policy = self.cluster_queryset(self.cluster).filter(node__name=kwargs["node"]).first()
        if policy is None:
            node = get_object_or_404(Node, cluster=self.cluster, name=kwargs["node"])
            policy = NodePolicy(node=node)
        return Response(self.get_serializer(policy).data)

    def update(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        partial = bool(kwargs.pop("partial", False))
        node = get_object_or_404(Node, cluster=self.cluster, name=self.kwargs["node"])
        existing = NodePolicy.objects.filter(node=node).first() if partial else None
        serializer = NodePolicySerializer(
            existing, data=request.data, partial=partial, context=self.get_serializer_context()
        )
        serializer.is_valid(raise_exception=True)
        try:
            policy, issues = node_policy_save(
                node=node, values=serializer.validated_data, replace=not partial
            )
        except NodePolicyError as error:
            raise ValidationError(api_field_errors(error.field_errors)) from error
        policy.issues = issues  # type: ignore[attr-defined]
        return Response(NodePolicySavedSerializer(policy).data)

    def partial_update(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        return self.update(request, *args, partial=True, **kwargs)

    @action(detail=True, methods=["get"], filter_backends=[], pagination_class=None)
    def diff(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        policy = self.get_object()
        return Response(NodePolicyDiffSerializer(node_policy_review(policy)).data)

    @action(detail=False, methods=["post"], filter_backends=[], pagination_class=None)
    def preview(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        serializer = PolicyPreviewInputSerializer(
            data=request.data, context=self.get_serializer_context()
        )
        serializer.is_valid(raise_exception=True)
        try:
            preview = preview_saved_policies(cluster=self.cluster, **serializer.validated_data)
        except (PreviewInputError, WhatIfInputError) as error:
            raise ValidationError(api_field_errors(error.field_errors)) from error
        return Response(PolicyPreviewSerializer(preview.as_json()).data)
