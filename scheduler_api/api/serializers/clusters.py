"""Clusters: counts, data age and the sync state of each collection."""

from __future__ import annotations

from typing import Any

from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers
from rest_framework.validators import UniqueValidator

from scheduler_api.api.field_validation import KnownFieldsMixin
from scheduler_api.selectors.clusters import age_seconds, cluster_data_age
from topology.choices import SyncResource
from topology.models import Cluster, SyncState


class SyncStateSerializer(serializers.ModelSerializer):
    age_seconds = serializers.SerializerMethodField(
        help_text="seconds since `synced_through`; null when never synced"
    )

    class Meta:
        model = SyncState
        fields = [
            "resource",
            "served",
            "api_version",
            "synced_through",
            "age_seconds",
            "last_full_list_at",
            "listed_count",
            "last_event_at",
            "events_applied",
            "lag_seconds",
            "consecutive_errors",
            "last_error",
            "last_error_at",
        ]

    def get_age_seconds(self, state: SyncState) -> float | None:
        return age_seconds(state.synced_through)


def every_collection(cluster: Cluster) -> list[SyncState]:
    """The cluster's sync states (prefetched), and an empty one for each collection it has
    none of yet, in SyncResource order."""
    found = {state.resource: state for state in cluster.sync_states.all()}
    return [
        found.get(resource) or SyncState(cluster=cluster, resource=resource)
        for resource in SyncResource.values
    ]


class DataAgeSerializer(serializers.Serializer):
    as_of = serializers.DateTimeField(allow_null=True)
    seconds = serializers.FloatField(allow_null=True)
    source = serializers.CharField(help_text="live sync (stalest collection), last import, …")


class ClusterSerializer(serializers.ModelSerializer):
    node_count = serializers.IntegerField(read_only=True)
    pod_count = serializers.IntegerField(read_only=True)
    data_age = serializers.SerializerMethodField()
    sync = serializers.SerializerMethodField(
        help_text="every collection Topolens mirrors, as the Sync health page lists them; one "
        "never synced (an imported cluster) has zero counts and null times"
    )

    class Meta:
        model = Cluster
        fields = [
            "name",
            "description",
            "created_at",
            "last_imported_at",
            "node_count",
            "pod_count",
            "data_age",
            "sync",
        ]
        read_only_fields = ["created_at", "last_imported_at"]

    @extend_schema_field(DataAgeSerializer)
    def get_data_age(self, cluster: Cluster) -> dict[str, Any]:
        age = cluster_data_age(cluster)
        return {"as_of": age.as_of, "seconds": age_seconds(age.as_of), "source": age.source}

    @extend_schema_field(SyncStateSerializer(many=True))
    def get_sync(self, cluster: Cluster) -> list[dict[str, Any]]:
        return list(SyncStateSerializer(every_collection(cluster), many=True).data)


class ClusterCreateSerializer(KnownFieldsMixin, serializers.Serializer):
    """A cluster to mirror: its name is its stable lookup in every URL."""

    name = serializers.SlugField(
        max_length=100,
        validators=[UniqueValidator(Cluster.objects.all(), "A cluster with this name exists.")],
    )
    description = serializers.CharField(max_length=200, required=False, allow_blank=True)


class ClusterUpdateSerializer(KnownFieldsMixin, serializers.Serializer):
    """The name is the cluster's stable lookup: it never changes."""

    description = serializers.CharField(max_length=200, allow_blank=True)
