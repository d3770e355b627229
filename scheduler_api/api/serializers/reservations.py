"""Koordinator Reservation objects, and the node.koordinator.sh/reservation annotation."""

from __future__ import annotations

from rest_framework import serializers

from scheduler_api.api.serializers.common import amounts_field, numa_amounts_field
from topology.models import NodeCPUReservation, Reservation
from topology.selectors.reservations import expires_at_of, is_lapsed


class ReservationSerializer(serializers.ModelSerializer):
    node = serializers.CharField(source="node_name", help_text="empty: not scheduled yet")
    allocatable = amounts_field()
    allocated = amounts_field()
    numa_resources = numa_amounts_field()
    expires_at = serializers.SerializerMethodField(
        help_text="`expires`, else creation + `ttl`; null: never expires"
    )
    expired = serializers.SerializerMethodField(
        help_text="past its expiry while `phase` still says Available, Pending or Waiting: "
        "Koordinator marks it Failed on its next pass; it holds nothing to count on"
    )

    class Meta:
        model = Reservation
        fields = [
            "name",
            "uid",
            "node",
            "phase",
            "expired",
            "expires_at",
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

    def get_expires_at(self, reservation: Reservation) -> str | None:
        expires_at = expires_at_of(reservation)
        return expires_at.isoformat() if expires_at else None

    def get_expired(self, reservation: Reservation) -> bool:
        return is_lapsed(reservation.phase, expires_at_of(reservation))


class NodeReservationSerializer(serializers.ModelSerializer):
    node = serializers.CharField(source="node.name")
    resources = amounts_field()

    class Meta:
        model = NodeCPUReservation
        fields = ["node", "resources", "reserved_cpus", "apply_policy", "resolved_cpus"]
