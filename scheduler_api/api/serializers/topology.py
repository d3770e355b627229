"""One node's NUMA topology: zones, logical CPUs with their state, and the pods' allocations."""

from __future__ import annotations

from rest_framework import serializers

from scheduler_api.api.serializers.common import numa_amounts_field
from topology.choices import CPUState
from topology.models import PodAllocation, Zone, ZoneResource

AMOUNT_UNITS = (
    "in base units: millicores for cpu, bytes for memory and hugepages, a count otherwise"
)


class ZoneResourceSerializer(serializers.ModelSerializer):
    capacity = serializers.IntegerField(help_text=f"as the NRT publishes it, {AMOUNT_UNITS}")
    allocatable = serializers.IntegerField(help_text=f"as the NRT publishes it, {AMOUNT_UNITS}")
    available = serializers.IntegerField(
        allow_null=True,
        help_text=f"the NRT's own `available`, {AMOUNT_UNITS}; null: not published (Crane)",
    )

    class Meta:
        model = ZoneResource
        fields = ["name", "capacity", "allocatable", "available"]


class ZoneSerializer(serializers.ModelSerializer):
    costs = serializers.DictField(
        child=serializers.IntegerField(), help_text="zone name → distance"
    )
    resources = ZoneResourceSerializer(many=True)
    reserved_cpus = serializers.IntegerField(
        allow_null=True,
        help_text="whole CPUs Crane reserves in the zone (reservedCPUNums); Crane only",
    )
    numa_id = serializers.IntegerField(
        allow_null=True, help_text="the NUMA node id; null: not a NUMA zone"
    )

    class Meta:
        model = Zone
        fields = ["name", "zone_type", "numa_id", "parent", "costs", "reserved_cpus", "resources"]


class HolderSerializer(serializers.Serializer):
    kind = serializers.CharField(help_text="pod, reservation, kubelet, node-annotation, …")
    name = serializers.CharField()
    code = serializers.CharField(help_text="the short mark drawn for it")
    source = serializers.CharField()
    detail = serializers.CharField()


class CPUSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    core = serializers.IntegerField()
    socket = serializers.IntegerField()
    numa = serializers.IntegerField(help_text="NUMA zone id")
    state = serializers.ChoiceField(CPUState.choices)
    holder = HolderSerializer(allow_null=True)
    notes = serializers.ListField(child=serializers.CharField())


class NodeAllocationSerializer(serializers.ModelSerializer):
    numa_resources = numa_amounts_field()

    class Meta:
        model = PodAllocation
        fields = ["namespace", "pod_name", "source", "cpuset", "numa_resources"]


class NodeTopologySerializer(serializers.Serializer):
    node = serializers.CharField()
    flavour = serializers.CharField(allow_null=True, help_text="null: no NRT mirrored")
    policy = serializers.CharField(allow_null=True, help_text="Topology Manager policy")
    scope = serializers.CharField(allow_null=True, help_text="Topology Manager scope")
    max_numa_nodes = serializers.IntegerField(
        allow_null=True, help_text="Topology Manager max-allowable-numa-nodes (NUMA nodes)"
    )
    cpu_topology_source = serializers.CharField(allow_null=True)
    zones = ZoneSerializer(many=True)
    cpus = CPUSerializer(many=True, help_text="empty when the node publishes no CPU ids")
    cpu_detail_missing = serializers.CharField(help_text='why `cpus` is empty; "" otherwise')
    conflicts = serializers.ListField(child=serializers.CharField())
    allocations = NodeAllocationSerializer(many=True)
