"""django-filter sets for the API's lists: declarative, and documented in the OpenAPI schema."""

from __future__ import annotations

import django_filters
from django import forms
from django.db.models import Q, QuerySet
from django.db.models.fields.json import KeyTransform
from drf_spectacular.utils import extend_schema_field

from topology.choices import (
    Flavour,
    ReservationPhase,
    TopologyManagerPolicy,
    TopologyManagerScope,
)
from topology.filtersets import (
    NODE_ORDERING,
    RESERVATION_ORDERING,
    LabelFilter,
    parse_label,
)
from topology.models import Node, NodeCPUReservation, NodePolicy, Pod, Reservation


@extend_schema_field(
    {
        "type": "integer",
        "minimum": 0,
        "description": "some NUMA zone has at least this many free exclusive CPUs (nodes "
        "whose figures are not computed yet are left out)",
    }
)
class MinFreeCpusFilter(django_filters.NumberFilter):
    """A whole, non-negative count, as the schema says: "1.5" and "-1" are 400s."""

    field_class = forms.IntegerField


class NodeFilterSet(django_filters.FilterSet):
    name = django_filters.CharFilter(lookup_expr="icontains", help_text="name contains")
    label = LabelFilter(
        method="filter_labels",
        help_text="label selector: `key=value` or `key` (has the label); comma-separated, ANDed",
    )
    flavour = django_filters.ChoiceFilter(field_name="topology__flavour", choices=Flavour.choices)
    policy = django_filters.ChoiceFilter(
        field_name="topology__tm_policy",
        choices=TopologyManagerPolicy.choices,
        help_text="Topology Manager policy",
    )
    scope = django_filters.ChoiceFilter(
        field_name="topology__tm_scope",
        choices=TopologyManagerScope.choices,
        help_text="Topology Manager scope",
    )
    min_free_exclusive_cpus_in_one_zone = MinFreeCpusFilter(
        field_name="figures__max_free_cpus_in_one_zone",
        lookup_expr="gte",
        min_value=0,
        help_text="some NUMA zone has at least this many free exclusive CPUs "
        "(nodes whose figures are not computed yet are left out)",
    )
    ordering = django_filters.OrderingFilter(fields=NODE_ORDERING)

    class Meta:
        model = Node
        fields: list[str] = []

    def filter_labels(self, queryset: QuerySet[Node], name: str, value: str) -> QuerySet[Node]:
        """A JSON key compared with a JSON string, which PostgreSQL and SQLite both run.

        (SQLite has no `contains`, and there a KeyTextTransform compared with text makes
        SQLite parse the text as JSON: "malformed JSON".)
        """
        for index, term in enumerate(t for t in value.split(",") if t.strip()):
            key, wanted = parse_label(term)
            if not key:
                continue
            queryset = queryset.filter(labels__has_key=key)
            if wanted is not None:
                alias = f"_label_{index}"
                queryset = queryset.alias(**{alias: KeyTransform(key, "labels")}).filter(
                    Q(**{alias: wanted})
                )
        return queryset


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
