"""django-filter sets for the API's lists: declarative, and documented in the OpenAPI schema.

The node list's set is the dashboard overview's own (`topology.filtersets.NodeFilterSet`).
"""

from __future__ import annotations

import django_filters
from drf_spectacular.utils import extend_schema_field

from topology.choices import (
    ReservationPhase,
)
from topology.filtersets import (
    RESERVATION_ORDERING,
    AgreementFilterSet,
    DiagnosisFilterSet,
    FindingFilterSet,
    NodeFilterSet,
    PredictionFilterSet,
)
from topology.models import NodeCPUReservation, NodePolicy, Pod, Reservation

__all__ = [
    "AgreementFilterSet",
    "DiagnosisFilterSet",
    "FindingFilterSet",
    "NodeFilterSet",
    "NodePolicyFilterSet",
    "NodeReservationFilterSet",
    "PodFilterSet",
    "PredictionFilterSet",
    "ReservationFilterSet",
]


@extend_schema_field({"type": "string", "enum": ["true", "false"]})
class StrictBooleanFilter(django_filters.TypedChoiceFilter):
    """`true` or `false`, anything else a 400: django-filter's BooleanFilter reads any
    other word as "not set" and quietly returns everything."""

    def __init__(self, **kwargs: object) -> None:
        choices = (("true", "true"), ("false", "false"))
        super().__init__(choices=choices, coerce=lambda value: value == "true", **kwargs)


class PodFilterSet(django_filters.FilterSet):
    node = django_filters.CharFilter(field_name="node_name", help_text="node name")
    namespace = django_filters.CharFilter()
    has_exclusive_cpus = StrictBooleanFilter(
        help_text="`true`: some source published a cpuset for the pod; `false`: none did",
    )
    ordering = django_filters.OrderingFilter(
        fields=(("namespace", "namespace"), ("name", "name"), ("node_name", "node"))
    )

    class Meta:
        model = Pod
        fields: list[str] = []


class ReservationFilterSet(django_filters.FilterSet):
    node = django_filters.CharFilter(field_name="node_name", help_text="node name")
    phase = django_filters.ChoiceFilter(choices=ReservationPhase.choices)
    ordering = django_filters.OrderingFilter(fields=RESERVATION_ORDERING)

    class Meta:
        model = Reservation
        fields: list[str] = []


class NodeReservationFilterSet(django_filters.FilterSet):
    node = django_filters.CharFilter(field_name="node__name", help_text="node name")

    class Meta:
        model = NodeCPUReservation
        fields: list[str] = []


class NodePolicyFilterSet(django_filters.FilterSet):
    node = django_filters.CharFilter(field_name="node__name", help_text="node name")

    class Meta:
        model = NodePolicy
        fields: list[str] = []
