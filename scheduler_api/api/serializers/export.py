"""The shape of `export`: a Kubernetes v1 List, as `manage.py export_snapshot` writes it."""

from __future__ import annotations

from rest_framework import serializers


class KubernetesListSerializer(serializers.Serializer):
    apiVersion = serializers.CharField(help_text='"v1"')
    kind = serializers.CharField(help_text='"List"')
    items = serializers.ListField(
        child=serializers.JSONField(),
        help_text="Nodes, NodeResourceTopologies, Pods, Reservations and the QoS ConfigMap",
    )
