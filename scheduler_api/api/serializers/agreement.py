"""The agreement audit (issue 32), in the shapes `manage.py audit` prints."""

from __future__ import annotations

from typing import Any

from rest_framework import serializers

from topology.models import AgreementVerdict, PodAgreement


class RateSerializer(serializers.Serializer):
    judged = serializers.IntegerField(help_text="pods judged (agree or differs)")
    agree = serializers.IntegerField()
    node_infeasible = serializers.IntegerField(help_text="the engine finds the node infeasible")
    zones_differ = serializers.IntegerField(help_text="the engine chooses other NUMA zones")
    cpuset_differs = serializers.IntegerField(help_text="the engine chooses another cpuset")
    not_judgeable = serializers.IntegerField()


class SampleSerializer(serializers.Serializer):
    taken_at = serializers.DateTimeField()
    rates = serializers.DictField(child=RateSerializer())


class AgreementSerializer(serializers.Serializer):
    rates = serializers.DictField(child=RateSerializer(), help_text="by system")
    computed_at = serializers.DateTimeField(allow_null=True, help_text="the last audit")
    data_age_seconds = serializers.FloatField(allow_null=True)
    approximation = serializers.CharField(help_text="what the replay approximates")
    history = SampleSerializer(many=True, help_text="rates after each audit, oldest first")


class PlacedSerializer(serializers.Serializer):
    numa_zones = serializers.ListField(child=serializers.IntegerField())
    cpuset = serializers.ListField(
        child=serializers.IntegerField(), allow_null=True, help_text="null: not published"
    )


class EnginePlacedSerializer(PlacedSerializer):
    feasible = serializers.BooleanField()


class PodAgreementSerializer(serializers.Serializer):
    namespace = serializers.CharField()
    name = serializers.CharField()
    node = serializers.CharField()
    system = serializers.CharField(help_text="the system that judged it; empty when unknown")
    verdict = serializers.ChoiceField(choices=AgreementVerdict.choices)
    differs = serializers.ListField(
        child=serializers.CharField(), help_text="node-infeasible, zones, cpuset"
    )
    real = PlacedSerializer()
    engine = EnginePlacedSerializer()
    why = serializers.CharField()

    def to_representation(self, instance: Any) -> dict[str, Any]:
        if isinstance(instance, PodAgreement):
            return instance.as_json()
        return dict(instance)
