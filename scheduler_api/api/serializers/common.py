"""Field types shared by the serializers."""

from __future__ import annotations

from rest_framework import serializers


def amounts_field(**kwargs: object) -> serializers.DictField:
    """A resource list in base units: millicores for CPU, bytes, counts."""
    return serializers.DictField(
        child=serializers.IntegerField(),
        help_text="resource → amount in base units (CPU in millicores, bytes, counts)",
        **kwargs,
    )


def string_map_field(**kwargs: object) -> serializers.DictField:
    return serializers.DictField(child=serializers.CharField(allow_blank=True), **kwargs)


def numa_amounts_field(**kwargs: object) -> serializers.DictField:
    return serializers.DictField(
        child=amounts_field(),
        help_text="NUMA id → resource → amount in base units",
        **kwargs,
    )


class ErrorSerializer(serializers.Serializer):
    """The one error shape (documented for every operation by a schema hook)."""

    detail = serializers.CharField()
    errors = serializers.DictField(child=serializers.ListField(child=serializers.CharField()))
