"""clusters/{cluster}/history: the cluster's figures over time (issue 33)."""

from __future__ import annotations

from rest_framework import serializers


class HistoryQuerySerializer(serializers.Serializer):
    # `from` is a Python keyword: the field is named in `get_fields`
    to = serializers.DateTimeField(required=False, help_text="ISO 8601; default now")
    step = serializers.IntegerField(
        required=False, min_value=300,
        help_text="seconds between points (the last sample of each step); default the "
        "finest that keeps at most 5,000 points",
    )  # fmt: skip

    format = serializers.ChoiceField(["json", "csv"], required=False, help_text="default json")

    def get_fields(self) -> dict[str, serializers.Field]:  # type: ignore[override]
        fields = super().get_fields()
        fields["from"] = serializers.DateTimeField(
            required=False, help_text="ISO 8601; default `to` minus the retention"
        )
        return fields


class HistorySampleSerializer(serializers.Serializer):
    taken_at = serializers.DateTimeField()
    nodes = serializers.IntegerField()
    zones = serializers.IntegerField(help_text="NUMA zones")
    free_cpus_total = serializers.IntegerField(help_text="free exclusive CPUs (whole CPUs)")
    largest_free_block = serializers.IntegerField(
        help_text="the most free exclusive CPUs in one NUMA zone of any node"
    )
    fragmentation = serializers.FloatField(
        help_text="1 - sum of each node's largest free zone / sum of all free exclusive CPUs"
    )
    largest_pod_by_policy = serializers.DictField(
        child=serializers.IntegerField(),
        help_text="Topology Manager policy -> the largest exclusive pod (CPUs) some node admits",
    )


class HistorySerializer(serializers.Serializer):
    cluster = serializers.CharField()
    step_seconds = serializers.IntegerField()
    retention_days = serializers.IntegerField()
    samples = HistorySampleSerializer(many=True, help_text="oldest first")
