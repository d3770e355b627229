"""Desired node policies: read now; the policy issue edits through the same serializer."""

from __future__ import annotations

from typing import Any

from rest_framework import serializers

from topology.models import NodePolicy
from topology.parsers.cpulist import format_cpulist, parse_cpulist
from topology.parsers.errors import FieldError


class NodePolicySerializer(serializers.ModelSerializer):
    """Null means "leave as observed"; "" for `numa_topology_policy` is Koordinator's None."""

    node = serializers.CharField(source="node.name", read_only=True)

    class Meta:
        model = NodePolicy
        fields = [
            "node",
            "numa_topology_policy",
            "numa_allocate_strategy",
            "cpu_bind_policy",
            "crane_topology_awareness",
            "reservation_cpus",
            "reservation_cpu_count",
            "reservation_apply_policy",
            "updated_at",
        ]
        read_only_fields = ["updated_at"]

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
