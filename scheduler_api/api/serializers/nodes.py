"""Nodes: a flat row per node for lists (read from values()), and one node in full."""

from __future__ import annotations

from rest_framework import serializers

from scheduler_api.api.serializers.common import amounts_field, string_map_field
from scheduler_api.api.serializers.policies import NodePolicySerializer
from scheduler_api.api.serializers.reservations import NodeReservationSerializer
from topology.choices import Flavour, TopologyManagerPolicy, TopologyManagerScope
from topology.models import NodeFigures, NodeTopology

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
