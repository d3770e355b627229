"""Desired node policies: read and edited through the same serializer; diff and preview shapes."""

from __future__ import annotations

from typing import Any

from rest_framework import serializers

from scheduler_api.api.field_validation import KnownFieldsMixin
from scheduler_api.api.serializers.whatif import QuantityField
from topology.models import NodePolicy
from topology.parsers.cpulist import format_cpulist, parse_cpulist
from topology.parsers.errors import FieldError


class NodePolicySerializer(KnownFieldsMixin, serializers.ModelSerializer):
    """Null means "leave as observed"; "" (or "None" on input) for `numa_topology_policy` is
    Koordinator's None."""

    node = serializers.CharField(source="node.name", read_only=True)
    updated_at = serializers.DateTimeField(
        read_only=True, allow_null=True, help_text="null: no desired policy saved yet"
    )
    draft = serializers.SerializerMethodField(
        help_text="false: the node has no desired policy yet; every field is null (leave as "
        "observed), the starting point a PUT or PATCH builds on"
    )

    class Meta:
        model = NodePolicy
        fields = ["node", "draft", *NodePolicy.FIELDS, "updated_at"]
        read_only_fields = ["updated_at"]
        extra_kwargs = {
            "reservation_cpu_count": {
                "help_text": "CPUs to reserve by count (koordlet picks them); 0 removes the "
                "node.koordinator.sh/reservation annotation; null leaves it as observed"
            },
            "reservation_cpus": {"help_text": 'cpulist to reserve; "" leaves it as observed'},
            # Koordinator has no "" for these two (null leaves them as observed): the
            # schema offers no blank, and "" is refused (issue 28)
            "numa_allocate_strategy": {"allow_blank": False},
            "cpu_bind_policy": {"allow_blank": False},
        }

    def get_draft(self, policy: NodePolicy) -> bool:
        return policy.pk is not None

    def to_internal_value(self, data: Any) -> Any:
        """ "None", as admin shows it, is taken for the None policy ("")."""
        if isinstance(data, dict) and data.get("numa_topology_policy") == "None":
            data = {**data, "numa_topology_policy": ""}
        return super().to_internal_value(data)

    def validate_reservation_cpus(self, value: str) -> str:
        """A Linux cpulist, stored canonically ("0-3,8")."""
        try:
            return format_cpulist(parse_cpulist(value))
        except FieldError as exc:
            raise serializers.ValidationError(str(exc)) from None

    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        cpus = attrs.get("reservation_cpus", getattr(self.instance, "reservation_cpus", ""))
        count = attrs.get(
            "reservation_cpu_count", getattr(self.instance, "reservation_cpu_count", None)
        )
        if cpus and count is not None:
            raise serializers.ValidationError(
                {"reservation_cpu_count": ["Give reserved CPUs either as a list or as a count."]}
            )
        return attrs


class PolicyIssueSerializer(serializers.Serializer):
    """A finding about a desired policy: an error blocks saving and applying; a warning not."""

    # Plain strings, not enums: other endpoints' `severity` / `kind` / `source` fields have
    # other value sets, and OpenAPI enum names would collide.
    severity = serializers.CharField(help_text="`error` or `warning`")
    field = serializers.CharField(help_text="the policy field at fault")
    message = serializers.CharField()
    pods = serializers.ListField(
        child=serializers.CharField(), help_text="namespace/name of the pods it concerns"
    )


class NodePolicySavedSerializer(NodePolicySerializer):
    """The saved policy, with the warnings it still has."""

    issues = PolicyIssueSerializer(many=True, read_only=True)

    class Meta(NodePolicySerializer.Meta):
        fields = [*NodePolicySerializer.Meta.fields, "issues"]


class FieldDiffSerializer(serializers.Serializer):
    field = serializers.CharField(help_text="the policy field")
    kind = serializers.CharField(help_text="`label` or `annotation`")
    key = serializers.CharField(help_text="the node label or annotation it sets")
    observed = serializers.CharField(allow_null=True, help_text="null: the node has no such key")
    desired = serializers.CharField(allow_null=True, help_text="null: the key is removed")
    managed = serializers.BooleanField(help_text="false: the policy leaves it as observed")
    changed = serializers.BooleanField()


class NodePolicyDiffSerializer(serializers.Serializer):
    """Observed against desired per field, the exact merge patch, and the policy's issues."""

    node = serializers.CharField()
    diff = FieldDiffSerializer(many=True)
    patch = serializers.JSONField(
        help_text="the JSON merge patch an apply sends (it adds metadata.resourceVersion)"
    )
    issues = PolicyIssueSerializer(many=True)
    apply_allowed = serializers.BooleanField(help_text="true when no issue is an error")


class ReferencePodInputSerializer(serializers.Serializer):
    """A pod to preview with: an exclusive Guaranteed pod of `cpus`, or a whole manifest."""

    name = serializers.SlugField(max_length=100)
    cpus = serializers.IntegerField(
        min_value=1, max_value=4096, required=False, help_text="whole CPUs the pod asks for"
    )
    memory = QuantityField(required=False, default="1Gi", max_length=32)
    manifest = serializers.JSONField(required=False, help_text="a Pod manifest; wins over cpus")

    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        if "cpus" not in attrs and "manifest" not in attrs:
            raise serializers.ValidationError({"cpus": ["Give `cpus` or a `manifest`."]})
        if "manifest" in attrs and not isinstance(attrs["manifest"], dict):
            message = "Expected a Pod manifest (an object)."
            raise serializers.ValidationError({"manifest": [message]})
        return attrs


class PolicyPreviewInputSerializer(KnownFieldsMixin, serializers.Serializer):
    """Which draft policies to preview, and with which pods."""

    nodes = serializers.ListField(
        child=serializers.CharField(max_length=253),
        required=False,
        max_length=5000,
        help_text="nodes whose saved draft policy to preview; default: every node with one",
    )
    reference_pods = ReferencePodInputSerializer(
        many=True,
        required=False,
        max_length=20,
        help_text="default: the saved reference pods (this cluster's and the global ones), "
        "else a 4-, 8- and 16-CPU exclusive pod",
    )


class NodeEffectSerializer(serializers.Serializer):
    node = serializers.CharField()
    fits_before = serializers.BooleanField(help_text="as mirrored")
    fits_after = serializers.BooleanField(help_text="with the draft policy written")
    capacity_before = serializers.IntegerField(help_text="copies the node could still take")
    capacity_after = serializers.IntegerField()
    reasons_before = serializers.ListField(child=serializers.CharField())
    reasons_after = serializers.ListField(child=serializers.CharField())


class ReferenceEffectSerializer(serializers.Serializer):
    name = serializers.CharField()
    cpus = serializers.IntegerField(
        allow_null=True, help_text="whole CPUs the pod asks for; null: given as a manifest"
    )
    source = serializers.CharField(help_text="`default`, `saved` or `given` (with the request)")
    gained = serializers.ListField(
        child=serializers.CharField(), help_text="nodes that could host it only with the draft"
    )
    lost = serializers.ListField(
        child=serializers.CharField(), help_text="nodes that could host it only without"
    )
    nodes = NodeEffectSerializer(many=True)


class PolicyPreviewSerializer(serializers.Serializer):
    """Which nodes gain or lose each reference pod if the draft policies were applied."""

    cluster = serializers.CharField()
    nodes = serializers.ListField(
        child=serializers.CharField(), help_text="nodes whose draft changes something"
    )
    unchanged = serializers.ListField(
        child=serializers.CharField(), help_text="nodes whose draft changes nothing"
    )
    reference_pods = ReferenceEffectSerializer(many=True)
