"""The stored QoS ConfigMap, and per node the effective strategy and the schemata it gives."""

from __future__ import annotations

from rest_framework import serializers

from scheduler_api.api.serializers.common import string_map_field


class StoredQoSSerializer(serializers.Serializer):
    namespace = serializers.CharField(source="config.namespace")
    name = serializers.CharField(source="config.name")
    uid = serializers.CharField(source="config.uid")
    resource_version = serializers.CharField(source="config.resource_version")
    observed_at = serializers.DateTimeField(source="config.observed_at")
    resource_qos_config = serializers.JSONField(
        help_text="`resource-qos-config` as Koordinator reads it: clusterStrategy, nodeStrategies"
    )
    data = string_map_field(source="config.data", help_text="the ConfigMap's other keys")


class EffectiveClassSerializer(serializers.Serializer):
    qos_class = serializers.CharField(help_text="lsrClass, lsClass, beClass, systemClass")
    enable = serializers.BooleanField()
    cat_range_start_percent = serializers.IntegerField(source="start")
    cat_range_end_percent = serializers.IntegerField(source="end")
    mba_percent = serializers.IntegerField(source="mba", allow_null=True)
    origins = serializers.ListField(
        child=serializers.CharField(),
        help_text='the layers that set it, e.g. ["default", "cluster"]',
    )


class GroupSchemataSerializer(serializers.Serializer):
    group = serializers.CharField(help_text="resctrl group: LSR, LS or BE")
    qos_class = serializers.CharField()
    start_way = serializers.IntegerField(allow_null=True)
    end_way = serializers.IntegerField(allow_null=True)
    l3_mask = serializers.CharField(allow_null=True)
    l3_line = serializers.CharField(allow_null=True, help_text='e.g. "L3:0=f;1=f;"')
    mb_value = serializers.IntegerField(allow_null=True)
    mb_line = serializers.CharField(allow_null=True, help_text='e.g. "MB:0=20;1=20;"')


class IssueSerializer(serializers.Serializer):
    level = serializers.CharField(help_text="warning (koordlet skips, the kernel rejects) or info")
    subject = serializers.CharField()
    message = serializers.CharField()


class NodeQoSSerializer(serializers.Serializer):
    node = serializers.CharField()
    node_strategy = serializers.CharField(
        allow_null=True, help_text="the first node strategy matching; null: the cluster strategy"
    )
    strategy = serializers.JSONField(help_text="the merged strategy koordlet gets")
    resctrl = EffectiveClassSerializer(many=True)
    vendor = serializers.CharField()
    cat_l3_cbm_mask = serializers.CharField()
    l3_ids = serializers.ListField(child=serializers.IntegerField())
    schemata = GroupSchemataSerializer(many=True)
    issues = IssueSerializer(many=True)
