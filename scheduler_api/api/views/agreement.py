"""Does the engine agree with where pods really landed (issue 32)? The stored audit."""

from __future__ import annotations

from typing import Any

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiExample, OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework import generics
from rest_framework.request import Request
from rest_framework.response import Response

from scheduler_api.api.filtersets import AgreementFilterSet, PredictionFilterSet
from scheduler_api.api.serializers.agreement import (
    AgreementSerializer,
    PodAgreementSerializer,
    PredictionSerializer,
)
from scheduler_api.api.views.base import CLUSTER_PARAMETER, ClusterScopedMixin
from topology.access import PERMISSIONS, Action
from topology.models import Cluster, PodAgreement, TrackedPrediction
from topology.services.audit.summary import agreement_summary

PREDICTION_PARAMETER = OpenApiParameter(
    "prediction", OpenApiTypes.INT, OpenApiParameter.PATH, description="the answer's tracked.id"
)
POD_EXAMPLE = OpenApiExample(
    "A Koordinator pod the engine would have put on another NUMA zone",
    value={
        "namespace": "ml",
        "name": "inference-7d9f-abcde",
        "node": "epyc-01",
        "system": "koordinator",
        "verdict": "differs",
        "differs": ["zones", "cpuset"],
        "real": {"numa_zones": [2], "cpuset": [16, 17, 18, 19]},
        "engine": {"feasible": True, "numa_zones": [0], "cpuset": [0, 1, 2, 3]},
        "why": "the node rebuilt as just before the pod arrived (pods created after it "
        "removed, by creationTimestamp): an approximation of the scheduler's view",
    },
    response_only=True,
)


@extend_schema(
    parameters=[CLUSTER_PARAMETER],
    summary="Agreement rates per system, now and over time",
    tags=["agreement"],
    responses={200: OpenApiResponse(AgreementSerializer, "The last audit's rates")},
)
class AgreementView(ClusterScopedMixin, generics.GenericAPIView):
    queryset = PodAgreement.objects.all()
    permission_model = PodAgreement
    serializer_class = AgreementSerializer
    filter_backends: list[Any] = []
    pagination_class = None

    def cluster_queryset(self, cluster: Cluster) -> Any:
        return PodAgreement.objects.filter(cluster=cluster)

    def get(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        return Response(agreement_summary(self.cluster))


@extend_schema(
    parameters=[CLUSTER_PARAMETER],
    summary="Each running pod's audit verdict",
    tags=["agreement"],
    examples=[POD_EXAMPLE],
)
class AgreementPodListView(ClusterScopedMixin, generics.ListAPIView):
    queryset = PodAgreement.objects.all()
    permission_model = PodAgreement
    serializer_class = PodAgreementSerializer
    filterset_class = AgreementFilterSet

    def cluster_queryset(self, cluster: Cluster) -> Any:
        return PodAgreement.objects.filter(cluster=cluster).order_by("namespace", "name")


@extend_schema(
    parameters=[CLUSTER_PARAMETER],
    summary="What-ifs asked with `track: true`, and whether each held",
    tags=["agreement"],
)
class PredictionListView(ClusterScopedMixin, generics.ListAPIView):
    queryset = TrackedPrediction.objects.all()
    required_permissions = {"GET": PERMISSIONS[Action.READ_PREDICTIONS]}  # as the dashboard
    serializer_class = PredictionSerializer
    filterset_class = PredictionFilterSet

    def cluster_queryset(self, cluster: Cluster) -> Any:
        return TrackedPrediction.objects.filter(cluster=cluster).order_by("-created_at", "-pk")


@extend_schema(
    parameters=[CLUSTER_PARAMETER, PREDICTION_PARAMETER],
    summary="One tracked prediction",
    tags=["agreement"],
)
class PredictionDetailView(ClusterScopedMixin, generics.RetrieveAPIView):
    queryset = TrackedPrediction.objects.all()
    required_permissions = {"GET": PERMISSIONS[Action.READ_PREDICTIONS]}
    serializer_class = PredictionSerializer
    lookup_url_kwarg = "prediction"
    filter_backends: list[Any] = []

    def cluster_queryset(self, cluster: Cluster) -> Any:
        return TrackedPrediction.objects.filter(cluster=cluster)
