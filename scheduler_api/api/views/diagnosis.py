"""Why pods are Pending or rejected, and whether the topology data is true (issue 30)."""

from __future__ import annotations

from typing import Any

from drf_spectacular.utils import OpenApiExample, OpenApiResponse, extend_schema
from rest_framework import generics
from rest_framework.exceptions import NotFound
from rest_framework.request import Request
from rest_framework.response import Response

from scheduler_api.api.filtersets import DiagnosisFilterSet, FindingFilterSet
from scheduler_api.api.serializers.common import ErrorSerializer
from scheduler_api.api.serializers.diagnosis import FindingSerializer, PodDiagnosisSerializer
from scheduler_api.api.views.base import CLUSTER_PARAMETER, ClusterScopedMixin
from topology.models import Cluster, Finding, PodDiagnosis
from topology.services.diagnosis.lookup import NoSuchPod, NothingToDiagnose, pod_diagnosis

DIAGNOSIS_EXAMPLE = OpenApiExample(
    "A pod the NUMA zones cannot hold",
    value={
        "namespace": "prod",
        "name": "db-0",
        "state": "pending",
        "node": None,
        "reason": "Unschedulable",
        "message": "0/2 nodes are available: 2 cannot align pod: app.",
        "scheduler": "scheduler-plugins",
        "judged_by": {
            "system": "scheduler-plugins",
            "scheduler_name": "topo-aware-scheduler",
            "profile": "topo-aware-scheduler",
            "how": "spec.schedulerName 'topo-aware-scheduler' is profile built-in default",
        },
        "fits_now": 0,
        "fits_by_system": {},
        "refusals": [
            {
                "check": "single-numa-node",
                "nodes": 2,
                "example": "n1: cpu short by 4 CPUs on zone 0; single-numa-node",
            }
        ],
        "nearest": [
            {
                "node": "n1",
                "change": "needs 2 more CPUs free on one NUMA zone of node n1; its best zone "
                "has 8 CPUs free, the pod needs 10 CPUs",
                "alignment": True,
            }
        ],
        "alignment_only": True,
        "admission": None,
        "events": [{"reason": "FailedScheduling", "message": "...", "count": 5}],
        "stale_data": False,
        "data_age_seconds": 12.5,
        "why": "",
        "computed_at": "2026-11-29T01:05:02Z",
        "mirror_version": 812,
    },
    response_only=True,
)
FINDING_EXAMPLE = OpenApiExample(
    "An NRT whose pod fingerprint is off sync",
    value={
        "kind": "fingerprint-off-sync",
        "severity": "error",
        "node": "n1",
        "object": "n1",
        "message": "the NRT of n1 was computed from another set of pods than the node runs",
        "evidence": {
            "published": "pfp0v001b92008c14168b3a6",
            "computed": "pfp0v0013b68d754c0817837",
            "method": "all",
            "pod_count": 3,
        },
        "computed_at": "2026-11-29T01:05:02Z",
    },
    response_only=True,
)


@extend_schema(
    parameters=[CLUSTER_PARAMETER],
    summary="Diagnoses of Pending and rejected pods",
    tags=["diagnosis"],
    examples=[DIAGNOSIS_EXAMPLE],
)
class DiagnosisListView(ClusterScopedMixin, generics.ListAPIView):
    queryset = PodDiagnosis.objects.all()
    permission_model = PodDiagnosis
    serializer_class = PodDiagnosisSerializer
    filterset_class = DiagnosisFilterSet

    def cluster_queryset(self, cluster: Cluster) -> Any:
        rows = PodDiagnosis.objects.filter(cluster=cluster).select_related("cluster")
        return rows.order_by("namespace", "name")


class PodDiagnosisView(ClusterScopedMixin, generics.GenericAPIView):
    queryset = PodDiagnosis.objects.all()
    permission_model = PodDiagnosis
    serializer_class = PodDiagnosisSerializer
    filter_backends: list[Any] = []
    pagination_class = None

    @extend_schema(
        parameters=[CLUSTER_PARAMETER],
        summary="Why this pod is Pending or was rejected",
        tags=["diagnosis"],
        responses={
            200: OpenApiResponse(PodDiagnosisSerializer, "The diagnosis, current with the mirror"),
            404: OpenApiResponse(
                ErrorSerializer, "No such pod, or it is neither Pending nor rejected"
            ),
        },
        examples=[DIAGNOSIS_EXAMPLE],
    )
    def get(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        try:
            body = pod_diagnosis(self.cluster, kwargs["namespace"], kwargs["name"])
        except (NoSuchPod, NothingToDiagnose) as error:
            raise NotFound(str(error)) from error
        return Response(PodDiagnosisSerializer(body).data)


@extend_schema(
    parameters=[CLUSTER_PARAMETER],
    summary="Data-truth findings",
    tags=["diagnosis"],
    examples=[FINDING_EXAMPLE],
)
class FindingListView(ClusterScopedMixin, generics.ListAPIView):
    queryset = Finding.objects.all()
    permission_model = Finding
    serializer_class = FindingSerializer
    filterset_class = FindingFilterSet

    def cluster_queryset(self, cluster: Cluster) -> Any:
        return Finding.objects.filter(cluster=cluster).order_by("kind", "node_name", "object")
