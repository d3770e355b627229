"""Pods with the allocations each scheduler or kubelet published for them."""

from __future__ import annotations

from typing import Any

from rest_framework import serializers

from scheduler_api.api.serializers.common import (
    amounts_field,
    numa_amounts_field,
    string_map_field,
)
from topology.models import Pod, PodAllocation


class ContainerSerializer(serializers.Serializer):
    name = serializers.CharField()
    requests = amounts_field()
    limits = amounts_field()
    restart_policy = serializers.CharField(
        required=False,
        help_text='an init container\'s restartPolicy, "Always" for a sidecar; absent otherwise',
    )

    def to_representation(self, instance: Any) -> dict[str, Any]:
        data: dict[str, Any] = super().to_representation(instance)
        if not data.get("restart_policy"):
            data.pop("restart_policy", None)
        return data


class AllocationSerializer(serializers.ModelSerializer):
    numa_resources = numa_amounts_field()

    class Meta:
        model = PodAllocation
        fields = ["source", "cpuset", "numa_resources"]


class PodSerializer(serializers.ModelSerializer):
    node = serializers.CharField(source="node_name", help_text="empty: not bound yet")
    labels = string_map_field()
    annotations = string_map_field(help_text="only the annotations Topolens reads")
    containers = ContainerSerializer(many=True)
    init_containers = ContainerSerializer(many=True)
    overhead = amounts_field()
    has_exclusive_cpus = serializers.BooleanField(
        help_text="some source published a cpuset for it (Koordinator, kubelet static)"
    )
    allocations = AllocationSerializer(many=True)

    class Meta:
        model = Pod
        fields = [
            "namespace",
            "name",
            "uid",
            "node",
            "phase",
            "qos_class",
            "scheduler_name",
            "priority",
            "labels",
            "annotations",
            "containers",
            "init_containers",
            "overhead",
            "has_exclusive_cpus",
            "allocations",
            "observed_at",
        ]
