"""Pod diagnoses and data-truth findings (issue 30), as `manage.py diagnose` shapes them."""

from __future__ import annotations

from typing import Any

from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from topology.choices import DiagnosisState, FindingKind, Severity
from topology.models import Finding, PodDiagnosis


class RefusalSerializer(serializers.Serializer):
    check = serializers.CharField(help_text="the check that refused, e.g. single-numa-node")
    nodes = serializers.IntegerField(help_text="how many nodes it refused")
    example = serializers.CharField(help_text="one node and its reason")


class NearestSerializer(serializers.Serializer):
    node = serializers.CharField()
    change = serializers.CharField(help_text="the smallest change that would let the pod fit")
    alignment = serializers.BooleanField(
        help_text="true: the node has the amounts, but not in one NUMA zone"
    )


class HintSerializer(serializers.Serializer):
    numa = serializers.ListField(
        child=serializers.IntegerField(), allow_null=True, help_text="NUMA ids; null: any"
    )
    preferred = serializers.BooleanField()


class ProviderSerializer(serializers.Serializer):
    resource = serializers.CharField()
    source = serializers.CharField(help_text="cpu-manager, memory-manager or device-manager")
    hints = HintSerializer(many=True)
    accepted = serializers.BooleanField(help_text="the policy accepts one of its hints alone")


class KubeletAdmissionSerializer(serializers.Serializer):
    node = serializers.CharField()
    policy = serializers.CharField(allow_null=True)
    scope = serializers.CharField(required=False)
    admitted_now = serializers.BooleanField(required=False)
    blocking = serializers.ListField(child=serializers.CharField(), required=False)
    providers = ProviderSerializer(many=True)
    notes = serializers.ListField(child=serializers.CharField(), required=False)


class PodDiagnosisSerializer(serializers.Serializer):
    """The stored diagnosis of one Pending or rejected pod."""

    namespace = serializers.CharField()
    name = serializers.CharField()
    state = serializers.ChoiceField(choices=DiagnosisState.choices)
    node = serializers.CharField(allow_null=True, help_text="the node a rejected pod was bound to")
    reason = serializers.CharField(help_text="the status, condition or event reason")
    message = serializers.CharField()
    scheduler = serializers.CharField(help_text="the system that judged it")
    judged_by = serializers.DictField(help_text="system, scheduler_name, profile, how")
    fits_now = serializers.IntegerField(help_text="nodes where it would bind and be admitted now")
    fits_by_system = serializers.DictField(child=serializers.IntegerField())
    fits_on = serializers.ListField(
        child=serializers.CharField(), help_text="up to five nodes where it fits now, best first"
    )
    refusals = RefusalSerializer(many=True)
    nearest = NearestSerializer(many=True)
    alignment_only = serializers.BooleanField(
        help_text="nothing fits, but some node has the amounts in total: alignment refuses"
    )
    admission = KubeletAdmissionSerializer(allow_null=True)
    events = serializers.ListField(child=serializers.DictField())
    stale_data = serializers.BooleanField(
        help_text="the mirror is older than the cluster's freshness threshold"
    )
    data_age_seconds = serializers.FloatField(allow_null=True)
    why = serializers.CharField(help_text="why the pod could not be judged; empty when it was")
    computed_at = serializers.DateTimeField()
    mirror_version = serializers.IntegerField(help_text="the mirror version it was made from")

    def to_representation(self, instance: Any) -> dict[str, Any]:
        if isinstance(instance, PodDiagnosis):
            return instance.as_json()
        return dict(instance)


@extend_schema_field({"type": "object", "additionalProperties": True})
class EvidenceField(serializers.JSONField):
    pass


class FindingSerializer(serializers.ModelSerializer):
    kind = serializers.ChoiceField(choices=FindingKind.choices)
    severity = serializers.ChoiceField(choices=Severity.choices)
    node = serializers.SerializerMethodField()
    object = serializers.SerializerMethodField()
    evidence = EvidenceField()

    class Meta:
        model = Finding
        fields = ["kind", "severity", "node", "object", "message", "evidence", "computed_at"]

    def get_node(self, finding: Finding) -> str | None:
        return finding.node_name or None

    def get_object(self, finding: Finding) -> str | None:
        return finding.object or None
