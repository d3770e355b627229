"""Koordinator Reservation objects, and the node.koordinator.sh/reservation annotation."""

from __future__ import annotations

from rest_framework import serializers

from scheduler_api.api.serializers.common import amounts_field, numa_amounts_field
from topology.models import NodeCPUReservation, Reservation


class ReservationSerializer(serializers.ModelSerializer):
    node = serializers.CharField(source="node_name", help_text="empty: not scheduled yet")
    allocatable = amounts_field()
    allocated = amounts_field()
    numa_resources = numa_amounts_field()

    class Meta:
        model = Reservation
        fields = [
            "name",
            "uid",
            "node",
            "phase",
            "template_namespace",
            "template_labels",
            "containers",
            "owners",
            "current_owners",
            "ttl_seconds",
            "expires",
            "allocate_once",
            "allocate_policy",
            "unschedulable",
            "pre_allocation",
            "allocatable",
            "allocated",
            "cpuset",
            "numa_resources",
            "observed_at",
        ]


class NodeReservationSerializer(serializers.ModelSerializer):
    node = serializers.CharField(source="node.name")
    resources = amounts_field()

    class Meta:
        model = NodeCPUReservation
        fields = ["node", "resources", "reserved_cpus", "apply_policy", "resolved_cpus"]
