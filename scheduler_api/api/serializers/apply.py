"""Write-back: the audit record of an apply, and the Reservation-from-a-what-if request."""

from __future__ import annotations

from typing import Any

from django.urls import reverse
from rest_framework import serializers

from scheduler_api.api.serializers.common import string_map_field
from scheduler_api.api.serializers.whatif import WhatIfRequestSerializer
from scheduler_api.services.whatif import COMPARE_ALL
from topology.choices import ApplyStatus, WriteKind
from topology.editing.reservation import BEST_NODE, RESERVATION_SCHEDULER
from topology.models import ApplyRecord
from topology.services.whatif.service import SCHEDULERS


class ApplyRecordSerializer(serializers.ModelSerializer):
    """One apply: who asked, when, what was sent, and what came of it."""

    cluster = serializers.CharField(source="cluster_name")
    kind = serializers.ChoiceField(WriteKind.choices)
    status = serializers.ChoiceField(
        ApplyStatus.choices, help_text="pending until the task ran; then applied, conflict or error"
    )
    user = serializers.CharField(source="username", help_text="who asked for it")
    patch = serializers.JSONField(
        help_text="the exact body sent (node: merge patch with metadata.resourceVersion; "
        "QoS: the whole ConfigMap PUT; reservation: the created object)"
    )
    cluster_version = serializers.JSONField(
        allow_null=True, help_text="on a conflict: the object as the cluster has it (theirs)"
    )
    url = serializers.SerializerMethodField()

    class Meta:
        model = ApplyRecord
        fields = [
            "id",
            "url",
            "cluster",
            "kind",
            "object_name",
            "user",
            "requested_at",
            "finished_at",
            "status",
            "message",
            "patch",
            "diff",
            "resource_version_before",
            "resource_version_after",
            "cluster_version",
        ]

    def get_url(self, record: ApplyRecord) -> str:
        return apply_record_path(record)


def apply_record_path(record: ApplyRecord) -> str:
    return reverse("api:apply-detail", kwargs={"cluster": record.cluster_name, "apply": record.pk})


# Reservation from a what-if ---------------------------------------------------------------


class ObjectReferenceSerializer(serializers.Serializer):
    kind = serializers.CharField(required=False, help_text="e.g. Pod, StatefulSet")
    namespace = serializers.CharField(required=False)
    name = serializers.CharField()
    apiVersion = serializers.CharField(required=False)
    uid = serializers.CharField(required=False)


class SelectorRequirementSerializer(serializers.Serializer):
    key = serializers.CharField()
    operator = serializers.ChoiceField(["In", "NotIn", "Exists", "DoesNotExist"])
    values = serializers.ListField(child=serializers.CharField(), required=False)


class LabelSelectorSerializer(serializers.Serializer):
    matchLabels = string_map_field(required=False)
    matchExpressions = SelectorRequirementSerializer(many=True, required=False)


class OwnerSerializer(serializers.Serializer):
    """Who may use the reservation: a named object, or pods matching a label selector."""

    object = ObjectReferenceSerializer(required=False)
    labelSelector = LabelSelectorSerializer(required=False)

    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        if not attrs:
            raise serializers.ValidationError("Give `object` or `labelSelector`.")
        return attrs


class ReservationCreateSerializer(WhatIfRequestSerializer):
    """The what-if's pod (a manifest in `pod`, or the compact form) and where to reserve."""

    replicas = None  # one reservation, one pod
    capacity = None  # a reservation reads the verdicts only
    scheduler = serializers.ChoiceField(
        [*SCHEDULERS, COMPARE_ALL],
        required=False,
        help_text=f"who judges the node and finds `{BEST_NODE}`; default `{RESERVATION_SCHEDULER}` "
        f"(koord-scheduler places Reservations); `{COMPARE_ALL}` means each node's own system",
    )
    node = serializers.CharField(
        max_length=253, help_text=f"the node to pin it to, or `{BEST_NODE}`: the what-if's best"
    )
    owners = OwnerSerializer(many=True, allow_empty=False, help_text="ORed, as Koordinator reads")
    reservation_name = serializers.CharField(
        required=False, max_length=253, help_text="default: `<pod name>-<node>`"
    )
    ttl = serializers.CharField(
        required=False, help_text="a Go duration (`1h30m`; `0` = never); default 24h upstream"
    )
    expires = serializers.DateTimeField(required=False, help_text="RFC 3339; excludes ttl")
    allocate_once = serializers.BooleanField(
        default=True, help_text="only the first owner to allocate it may use it"
    )
    preview = serializers.BooleanField(
        default=False, help_text="true: return the exact object and write nothing"
    )


class ReservationPreviewSerializer(serializers.Serializer):
    reservation = serializers.JSONField(help_text="the exact object a create would POST")
    node = serializers.CharField()
    fits = serializers.BooleanField(help_text="the what-if's verdict for the pod on that node")
    reasons = serializers.ListField(child=serializers.CharField())
    warnings = serializers.ListField(child=serializers.CharField())
    refusals = serializers.ListField(
        child=serializers.CharField(), help_text="why a create would be refused now"
    )
    diff = serializers.CharField()
