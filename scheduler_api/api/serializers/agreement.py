"""The agreement audit (issue 32), in the shapes `manage.py audit` prints."""

from __future__ import annotations

from typing import Any

from rest_framework import serializers

from topology.models import AgreementVerdict, PodAgreement, TrackedPrediction


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


class PredictionCountsSerializer(serializers.Serializer):
    waiting = serializers.IntegerField()
    held = serializers.IntegerField()
    missed = serializers.IntegerField()
    changed = serializers.IntegerField(help_text="the cluster changed meanwhile: not counted")
    expired = serializers.IntegerField(help_text="no pod came within the window")
    held_rate = serializers.FloatField(
        allow_null=True, help_text="held ÷ (held + missed); null: none settled"
    )


class AgreementSerializer(serializers.Serializer):
    rates = serializers.DictField(child=RateSerializer(), help_text="by system")
    computed_at = serializers.DateTimeField(allow_null=True, help_text="the last audit")
    data_age_seconds = serializers.FloatField(allow_null=True)
    approximation = serializers.CharField(help_text="what the replay approximates")
    history = SampleSerializer(many=True, help_text="rates after each audit, oldest first")
    predictions = PredictionCountsSerializer(
        help_text="what-ifs asked with `track: true`, per status (clusters/{cluster}/predictions)"
    )


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


class PredictedPlacementSerializer(serializers.Serializer):
    replica = serializers.IntegerField()
    node = serializers.CharField()
    numa_zones = serializers.ListField(child=serializers.IntegerField())
    cpuset = serializers.ListField(
        child=serializers.IntegerField(), allow_null=True, help_text="null: none chosen"
    )


class LandedPodSerializer(serializers.Serializer):
    namespace = serializers.CharField()
    name = serializers.CharField()
    uid = serializers.CharField()
    node = serializers.CharField()
    system = serializers.CharField(help_text="whose prediction it is held to")
    published = serializers.BooleanField(
        help_text="false: its system publishes no NUMA zones or cpuset; only the node compared"
    )
    numa_zones = serializers.ListField(child=serializers.IntegerField())
    cpuset = serializers.ListField(child=serializers.IntegerField(), allow_null=True)
    held = serializers.BooleanField()
    differs = serializers.ListField(child=serializers.CharField(), help_text="node, zones, cpuset")
    predicted = PredictedPlacementSerializer(
        allow_null=True, help_text="the replica it was compared with; null: none was left"
    )


class PredictionSerializer(serializers.ModelSerializer):
    """A what-if asked with `track: true` and what became of it."""

    matched_by = serializers.CharField(
        help_text="Kind/name of the controller owner, the pod name, or generateName*"
    )
    predicted = serializers.DictField(
        child=PredictedPlacementSerializer(many=True),
        help_text="by system: where the answer put each replica",
    )
    landed = LandedPodSerializer(many=True, help_text="the pods that came, in landing order")

    class Meta:
        model = TrackedPrediction
        fields = [
            "id", "created_at", "source", "namespace", "matched_by", "replicas", "scheduler",
            "scheduler_name", "predicted", "data_age_seconds", "expires_at", "status",
            "landed", "resolved_at", "why",
        ]  # fmt: skip
        read_only_fields = fields
