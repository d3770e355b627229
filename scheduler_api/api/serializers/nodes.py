"""Nodes: a flat row per node for lists (read from values()), and one node in full."""

from __future__ import annotations

from typing import Any

from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from scheduler_api.api.serializers.common import amounts_field, string_map_field
from scheduler_api.api.serializers.policies import NodePolicySerializer
from scheduler_api.api.serializers.reservations import NodeReservationSerializer
from topology.choices import Flavour, TopologyManagerPolicy, TopologyManagerScope
from topology.models import Node, NodeFigures, NodeTopology
from topology.selectors.dra import node_dra_devices

_NOT_COMPUTED = "null until the node's figures are computed"
_FREE_TOTAL = "CPUs (whole logical CPUs) free for an exclusive pod on the node; " + _NOT_COMPUTED
_FREE_ZONE = "CPUs free for an exclusive pod in the NUMA zone with the most; " + _NOT_COMPUTED


class NodeRowSerializer(serializers.Serializer):
    """One list row. Reads the dicts of `selectors.nodes.node_rows`; no relation per row."""

    name = serializers.CharField()
    labels = string_map_field()
    unschedulable = serializers.BooleanField()
    allocatable = amounts_field()
    observed_at = serializers.DateTimeField()
    flavour = serializers.ChoiceField(Flavour.choices, allow_null=True)
    policy = serializers.ChoiceField(
        TopologyManagerPolicy.choices, allow_null=True, help_text="Topology Manager policy"
    )
    scope = serializers.ChoiceField(
        TopologyManagerScope.choices, allow_null=True, help_text="Topology Manager scope"
    )
    cpu_count = serializers.IntegerField(
        allow_null=True, help_text="logical CPUs known by id (0: not published)"
    )
    figures_computed_at = serializers.DateTimeField(allow_null=True)
    free_cpus_total = serializers.IntegerField(allow_null=True, help_text=_FREE_TOTAL)
    max_free_cpus_in_one_zone = serializers.IntegerField(allow_null=True, help_text=_FREE_ZONE)
    largest_exclusive_pod = serializers.IntegerField(
        allow_null=True,
        help_text="largest exclusive pod (CPUs) the node admits under its own policy",
    )
    free_cpus_by_zone = serializers.DictField(
        child=serializers.IntegerField(),
        allow_null=True,
        help_text="NUMA id → CPUs free for an exclusive pod (whole CPUs): neither held "
        "exclusively nor reserved, the same figure as the dashboard's; not the NRT's own "
        "`available`",
    )


class NodeTopologySummarySerializer(serializers.ModelSerializer):
    policy = serializers.CharField(source="tm_policy")
    scope = serializers.CharField(source="tm_scope")
    max_numa_nodes = serializers.IntegerField(
        source="tm_max_numa_nodes",
        help_text="Topology Manager max-allowable-numa-nodes (NUMA nodes)",
    )
    options = string_map_field(source="tm_options")

    class Meta:
        model = NodeTopology
        fields = [
            "flavour",
            "api_version",
            "policy",
            "scope",
            "max_numa_nodes",
            "options",
            "topology_policies",
            "cpu_manager_policy",
            "kubelet_reserved_cpus",
            "crane_topology_policy",
            "cpu_topology_source",
            "cpu_count",
            "observed_at",
        ]


class NodeFiguresSerializer(serializers.ModelSerializer):
    free_cpus_by_zone = serializers.DictField(
        child=serializers.IntegerField(),
        help_text="NUMA id → CPUs free for an exclusive pod (whole CPUs), as the dashboard",
    )
    largest_exclusive_pod = serializers.DictField(
        child=serializers.IntegerField(), help_text="Topology Manager policy → CPUs"
    )

    class Meta:
        model = NodeFigures
        fields = [
            "computed_at",
            "free_cpus_by_zone",
            "free_cpus_total",
            "max_free_cpus_in_one_zone",
            "largest_exclusive_pod",
            "largest_exclusive_pod_own_policy",
        ]
        extra_kwargs = {
            "free_cpus_total": {"help_text": "CPUs free for an exclusive pod on the node"},
            "max_free_cpus_in_one_zone": {
                "help_text": "CPUs free for an exclusive pod in the NUMA zone with the most"
            },
            "largest_exclusive_pod_own_policy": {
                "help_text": "CPUs of the largest exclusive pod the node admits under its own "
                "Topology Manager policy"
            },
        }


class DRAHolderSerializer(serializers.Serializer):
    claim = serializers.CharField(help_text="the ResourceClaim holding the device, namespace/name")
    request = serializers.CharField(help_text="the claim's request the device was allocated for")
    pods = serializers.ListField(
        child=serializers.CharField(), help_text="namespace/name of the pods it is reserved for"
    )


class DRADeviceSerializer(serializers.Serializer):
    """One device a DRA ResourceSlice publishes on the node. Shown, not judged: the what-if
    does not consider DRA devices or claims yet."""

    driver = serializers.CharField()
    pool = serializers.CharField()
    name = serializers.CharField()
    numa_node = serializers.IntegerField(
        allow_null=True, help_text="NUMA node id (null: no known NUMA attribute names one)"
    )
    numa_attribute = serializers.CharField(
        help_text="the qualified attribute that gave numa_node (resource.kubernetes.io/numaNode, "
        "or a vendor's); empty when unknown"
    )
    attributes = serializers.DictField(
        help_text='qualified name → the attribute as the API writes it ({"string": …}, '
        '{"int": …}, {"version": …}, {"bool": …} or a list form)'
    )
    capacity = serializers.DictField(
        child=serializers.IntegerField(),
        help_text="qualified name → exact integer: the quantity's value in whole units, "
        "rounded up (bytes for memory capacities, a count otherwise)",
    )
    held = serializers.BooleanField(help_text="an allocated ResourceClaim holds it")
    held_by = DRAHolderSerializer(many=True)


class NodeDetailSerializer(serializers.Serializer):
    name = serializers.CharField()
    uid = serializers.CharField()
    resource_version = serializers.CharField()
    observed_at = serializers.DateTimeField()
    labels = string_map_field()
    annotations = string_map_field(help_text="only the annotations Topolens reads")
    capacity = amounts_field()
    allocatable = amounts_field()
    unschedulable = serializers.BooleanField()
    topology = NodeTopologySummarySerializer(allow_null=True, help_text="null: no NRT mirrored")
    figures = NodeFiguresSerializer(allow_null=True, help_text=_NOT_COMPUTED)
    reservation = NodeReservationSerializer(
        source="cpu_reservation",
        allow_null=True,
        help_text="the node.koordinator.sh/reservation annotation",
    )
    desired_policy = NodePolicySerializer(allow_null=True)
    dra_devices = serializers.SerializerMethodField(
        help_text="devices DRA ResourceSlices publish on the node, by driver, pool and name, "
        "each with its NUMA node and whether a ResourceClaim holds it; shown, not judged"
    )

    @extend_schema_field(DRADeviceSerializer(many=True))
    def get_dra_devices(self, node: Node) -> list[dict[str, Any]]:
        devices = node_dra_devices(node.cluster_id, node.name)
        return DRADeviceSerializer(devices, many=True).data  # type: ignore[return-value]
