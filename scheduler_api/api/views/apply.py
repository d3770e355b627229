"""Write-back through the API: apply a node policy or the QoS draft, create a Reservation
from a what-if, and read the audit history.

Applies run on the Celery worker: a request that may go ahead answers 202 with the
pending audit record and its `Location`; poll it until `status` is no longer
`pending`. A refused request (validation errors, no cluster connection, nothing to
change) is recorded too and answers 400, `errors` naming each reason, with the
record's `Location`. Only the admin role holds `topology.apply_nodepolicy`.
"""

from __future__ import annotations

from typing import Any

import django_filters
from django.shortcuts import get_object_or_404
from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import generics, status, viewsets
from rest_framework.exceptions import PermissionDenied, ValidationError
from rest_framework.request import Request
from rest_framework.response import Response

from scheduler_api.api.serializers.apply import (
    ApplyRecordSerializer,
    ReservationCreateSerializer,
    ReservationPreviewSerializer,
    apply_record_path,
)
from scheduler_api.api.serializers.common import ErrorSerializer
from scheduler_api.api.throttles import WhatIfThrottle
from scheduler_api.api.views.base import CLUSTER_PARAMETER, NODE_PARAMETER, ClusterScopedMixin
from scheduler_api.errors import error_body
from scheduler_api.services.whatif import COMPARE_ALL, body_pod
from topology.access import PERMISSIONS, Action
from topology.choices import ApplyStatus, WriteKind
from topology.editing.reservation import (
    RESERVATION_SCHEDULER,
    ReservationInputError,
    ReservationRequest,
)
from topology.models import ApplyRecord, Cluster, NodePolicy
from topology.services.policies.writeback import (
    ApplyPlan,
    ReservationPlan,
    plan_node_policy_apply,
    plan_qos_apply,
    plan_reservation_create,
    request_plan,
)

APPLY_PERMISSION = "topology.apply_nodepolicy"
APPLY_RESPONSES = {
    202: OpenApiResponse(
        ApplyRecordSerializer,
        "Queued: the pending audit record; `Location` names it. Poll it for the result "
        "(applied, conflict with both versions, or error).",
    ),
    400: OpenApiResponse(
        ErrorSerializer,
        "Refused, nothing written (validation errors, no connection, nothing to change, or "
        "malformed input); a refused apply is still recorded and `Location` names it.",
    ),
}


def planned_response(record: ApplyRecord, plan: ApplyPlan) -> Response:
    """202 with the pending record, or 400 with each refusal (the record is kept)."""
    headers = {"Location": apply_record_path(record)}
    if plan.allowed:
        data = ApplyRecordSerializer(record).data
        return Response(data, status=status.HTTP_202_ACCEPTED, headers=headers)
    errors: dict[str, list[str]] = {}
    for finding in plan.refusals:
        errors.setdefault(finding.path or "non_field_errors", []).append(finding.message)
    body = error_body("Refused; nothing was written.", errors)
    return Response(body, status=status.HTTP_400_BAD_REQUEST, headers=headers)


class _ApplyView(ClusterScopedMixin, generics.GenericAPIView):
    queryset = ApplyRecord.objects.all()
    required_permissions = {"POST": (APPLY_PERMISSION,)}
    serializer_class = ApplyRecordSerializer
    pagination_class = None
    filter_backends: list[Any] = []


@extend_schema(
    summary="Apply a node's desired policy to the cluster",
    tags=["policies"],
    parameters=[CLUSTER_PARAMETER, NODE_PARAMETER],
    request=None,
    responses=APPLY_RESPONSES,
)
class NodePolicyApplyView(_ApplyView):
    """A merge patch of the node's labels and annotations, guarded by the node's mirrored
    resourceVersion: a node changed meanwhile is never overwritten."""

    def post(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        policy = get_object_or_404(
            NodePolicy.objects.select_related("node__cluster"),
            node__cluster=self.cluster,
            node__name=self.kwargs["node"],
        )
        plan = plan_node_policy_apply(policy)
        return planned_response(request_plan(plan=plan, user=request.user), plan)


@extend_schema(
    summary="Apply the QoS draft to the cluster's slo-controller-config",
    tags=["qos"],
    parameters=[CLUSTER_PARAMETER],
    request=None,
    responses=APPLY_RESPONSES,
)
class QoSApplyView(_ApplyView):
    """Replaces the ConfigMap's `data` with the draft's, only if the ConfigMap is still at
    the version the draft started from."""

    def post(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        plan = plan_qos_apply(self.cluster)
        return planned_response(request_plan(plan=plan, user=request.user), plan)


class ApplyRecordFilterSet(django_filters.FilterSet):
    kind = django_filters.ChoiceFilter(choices=WriteKind.choices)
    status = django_filters.ChoiceFilter(choices=ApplyStatus.choices)
    object_name = django_filters.CharFilter(help_text="node name, namespace/name, or name")

    class Meta:
        model = ApplyRecord
        fields = ["kind", "status", "object_name"]


@extend_schema(parameters=[CLUSTER_PARAMETER], tags=["applies"])
class ApplyRecordViewSet(ClusterScopedMixin, viewsets.ReadOnlyModelViewSet):
    """The audit history of a cluster's write-backs, newest first (read-only).

    Readable by every role (view_applyrecord, granted by scheduler_api 0003): it holds
    no credentials.
    """

    queryset = ApplyRecord.objects.all()
    required_permissions = {"GET": ("topology.view_applyrecord",)}
    serializer_class = ApplyRecordSerializer
    filterset_class = ApplyRecordFilterSet
    lookup_url_kwarg = "apply"
    lookup_value_regex = r"\d+"

    def cluster_queryset(self, cluster: Cluster) -> Any:
        return ApplyRecord.objects.filter(cluster_name=cluster.name)


class ReservationCreateMixin:
    """POST clusters/{c}/reservations: a Koordinator Reservation from a what-if's pod.

    Operators may preview (`preview: true`, nothing written); creating needs the admin
    role, as every write-back does.
    """

    required_permissions = {
        "GET": ("topology.view_reservation",),
        "POST": PERMISSIONS[Action.RUN_WHATIF],
    }
    cluster: Cluster
    action: str

    def get_throttles(self) -> list[Any]:
        """The create runs a what-if to find or judge the node: throttled like one."""
        if self.action == "create":
            return [WhatIfThrottle()]
        return super().get_throttles()  # type: ignore[misc,no-any-return]

    @extend_schema(
        summary="Reserve what a what-if found (a Koordinator Reservation)",
        description=(
            "The what-if's pod (a Pod manifest in `pod`, or the compact form) becomes "
            "`spec.template`, pinned to `node` through `spec.template.spec.nodeName` "
            "(`best`: the what-if's top-ranked node that fits), with `owners`, `ttl` or "
            "`expires`, and `allocateOnce`. `preview: true` returns the exact object and "
            "writes nothing (operator or admin); creating needs the admin role and runs on "
            "the worker like every apply (202 + Location of the audit record). A name "
            "already taken in the cluster is a conflict: nothing is overwritten."
        ),
        request=ReservationCreateSerializer,
        responses={
            200: OpenApiResponse(ReservationPreviewSerializer, "`preview`: the exact object."),
            **APPLY_RESPONSES,
            429: OpenApiResponse(ErrorSerializer, "Too many what-ifs; retry after Retry-After."),
        },
    )
    def create(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        serializer = ReservationCreateSerializer(
            data=request.data,
            context=self.get_serializer_context(),  # type: ignore[attr-defined]
        )
        serializer.is_valid(raise_exception=True)
        data = serializer.validated_data
        if not data["preview"] and not request.user.has_perm(APPLY_PERMISSION):
            raise PermissionDenied(
                f"Your role does not allow this (it needs {APPLY_PERMISSION}); "
                "operators may preview with `preview: true`."
            )
        try:
            reservation = _request_of(data, scheduler_given="scheduler" in data)
            planned = plan_reservation_create(cluster=self.cluster, request=reservation)
        except ReservationInputError as error:
            raise ValidationError(error.field_errors) from error
        if data["preview"]:
            return Response(_preview(planned))
        record = request_plan(plan=planned.plan, user=request.user)
        return planned_response(record, planned.plan)


def _request_of(data: dict[str, Any], *, scheduler_given: bool) -> ReservationRequest:
    """The request as the service takes it; koord-scheduler judges the node unless the
    caller named a scheduler (`all` compares nothing here: each node's own system)."""
    scheduler = RESERVATION_SCHEDULER
    if scheduler_given:
        scheduler = "auto" if data["scheduler"] == COMPARE_ALL else data["scheduler"]
    return ReservationRequest(  # the pod and options are checked once, by the what-if
        pod=body_pod(data),
        node=data["node"],
        owners=[dict(owner) for owner in data["owners"]],
        name=data.get("reservation_name", ""),
        ttl=data.get("ttl"),
        expires=data.get("expires"),
        allocate_once=data["allocate_once"],
        scheduler=scheduler,
        scoring=data.get("scoring") or None,
        weights=dict(data["weights"]) if data.get("weights") else None,
    )


def _preview(planned: ReservationPlan) -> dict[str, Any]:
    verdict = planned.verdict or {}
    return {
        "reservation": planned.plan.body,
        "node": planned.node,
        "fits": planned.fits,
        "reasons": list(verdict.get("reasons") or []),
        "warnings": [str(f) for f in planned.plan.warnings],
        "refusals": [str(f) for f in planned.plan.refusals],
        "diff": planned.plan.diff,
    }
