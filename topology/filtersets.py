"""Filters for the dashboard's node overview: every filter and the sort order live in the URL.

Declarative (django-filter), so the same set can back an API list later.
"""

from __future__ import annotations

import re

import django_filters
from django import forms
from django.db.models import QuerySet
from django.db.models.fields.json import KeyTransform
from django.http import QueryDict
from drf_spectacular.utils import extend_schema_field

from topology.choices import (
    DiagnosisState,
    FindingKind,
    Flavour,
    ReservationPhase,
    Severity,
    TopologyManagerPolicy,
    TopologyManagerScope,
)
from topology.models import (
    AgreementVerdict,
    Finding,
    Node,
    PodAgreement,
    PodDiagnosis,
    PredictionStatus,
    Reservation,
    TrackedPrediction,
)
from topology.parsers.names import DNS_SUBDOMAIN

NODE_ORDERING = (
    ("name", "name"),
    ("figures__max_free_cpus_in_one_zone", "max_free_cpus_in_one_zone"),
    ("figures__free_cpus_total", "free_cpus_total"),
    ("figures__largest_exclusive_pod_own_policy", "largest_exclusive_pod"),
    ("topology__cpu_count", "cpu_count"),
    ("topology__flavour", "flavour"),
    ("topology__tm_policy", "policy"),
    ("topology__observed_at", "nrt_changed"),
    ("observed_at", "observed_at"),
)
"""The one set of node sort names: the API's `ordering` and the dashboard's `ordering`."""
ORDERING_LABELS = {
    "name": "name",
    "figures__max_free_cpus_in_one_zone": "free exclusive CPUs in one zone",
    "figures__free_cpus_total": "free exclusive CPUs on the node",
    "figures__largest_exclusive_pod_own_policy": "largest exclusive pod",
    "topology__cpu_count": "CPUs",
    "topology__flavour": "flavour",
    "topology__tm_policy": "policy",
    "topology__observed_at": "NRT last changed",
    "observed_at": "node last seen",
}
LEGACY_PARAMS = {"min_free": "min_free_exclusive_cpus_in_one_zone"}
"""The dashboard's first filter names, still understood (renamed to the API's)."""
LEGACY_SORT_NAMES = {
    "free": "max_free_cpus_in_one_zone",
    "largest": "largest_exclusive_pod",
    "changed": "nrt_changed",
}
"""The dashboard's first sort names (`?sort=free`), still understood."""


def has_legacy_names(params: QueryDict) -> bool:
    """The query uses one of the dashboard's first names (`sort`, `min_free`)."""
    return ("sort" in params and "ordering" not in params) or any(
        old in params and new not in params for old, new in LEGACY_PARAMS.items()
    )


def with_current_names(params: QueryDict) -> QueryDict:
    """`params` with an old `sort=` turned into `ordering=` and old filter names into the
    API's (kept links keep working)."""
    converted = params.copy()
    for old, new in LEGACY_PARAMS.items():
        if old in converted and new not in converted:
            converted.setlist(new, converted.pop(old))
    if "sort" in converted and "ordering" not in converted:
        terms = [t.strip() for t in converted.pop("sort")[-1].split(",") if t.strip()]
        converted["ordering"] = ",".join(_modern_sort_term(term) for term in terms)
    return converted


def _modern_sort_term(term: str) -> str:
    sign, name = ("-", term[1:]) if term.startswith("-") else ("", term)
    return sign + LEGACY_SORT_NAMES.get(name, name)


def parse_label(text: str) -> tuple[str, str | None]:
    """`key=value` → (key, value); a bare `key` → (key, None), meaning "has the label"."""
    key, sep, value = text.strip().partition("=")
    return key.strip(), (value.strip() if sep else None)


_LABEL_NAME = re.compile(r"[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?")


def label_error(text: str) -> str | None:
    """Why `text` is not `key=value` or `key` with Kubernetes label syntax (None: it is)."""
    key, value = parse_label(text)
    prefix, slash, name = key.rpartition("/")
    if not key or (slash and not DNS_SUBDOMAIN.fullmatch(prefix)):
        return f"{text!r}: a label key is needed before '=' (e.g. pool=gpu)"
    if not _LABEL_NAME.fullmatch(name):
        return f"{text!r}: {key!r} is not a Kubernetes label key"
    if value and not _LABEL_NAME.fullmatch(value):
        return f"{text!r}: {value!r} is not a Kubernetes label value"
    return None


class LabelSelectorField(forms.CharField):
    """A label filter checked as Kubernetes checks label keys and values."""

    def validate(self, value: str) -> None:
        """Each comma-separated term (the API ANDs several; the page takes one)."""
        super().validate(value)
        errors = [e for term in value.split(",") if term.strip() and (e := label_error(term))]
        if errors:
            # the user's text goes in as a parameter: a "%" in it is no format directive
            # (django-filter formats each message with its params)
            raise forms.ValidationError(
                [forms.ValidationError("%(problem)s", params={"problem": e}) for e in errors]
            )


class LabelFilter(django_filters.CharFilter):
    field_class = LabelSelectorField


@extend_schema_field(
    {
        "type": "integer",
        "minimum": 0,
        "description": "some NUMA zone has at least this many free exclusive CPUs (nodes "
        "whose figures are not computed yet are left out)",
    }
)
class MinFreeCpusFilter(django_filters.NumberFilter):
    """A whole, non-negative count, as the schema says: "1.5" and "-1" are refused."""

    field_class = forms.IntegerField


class NodeFilterSet(django_filters.FilterSet):
    """The node filters of the API's node list and of the dashboard's overview: one set,
    one name per filter (the labels and widgets are the page's; the API ignores them)."""

    name = django_filters.CharFilter(
        field_name="name", lookup_expr="icontains", label="Name contains",
        help_text="Name contains",
    )  # fmt: skip
    label = LabelFilter(
        method="filter_labels",
        label="Label",
        help_text="label selector: key=value, or key alone (has the label); comma-separated, ANDed",
        widget=forms.TextInput(attrs={"placeholder": "key=value"}),
    )
    flavour = django_filters.ChoiceFilter(
        field_name="topology__flavour", choices=Flavour.choices, label="NRT flavour"
    )
    policy = django_filters.ChoiceFilter(
        field_name="topology__tm_policy",
        choices=TopologyManagerPolicy.choices,
        label="Topology Manager policy",
        help_text="Topology Manager policy",
    )
    scope = django_filters.ChoiceFilter(
        field_name="topology__tm_scope",
        choices=TopologyManagerScope.choices,
        label="Topology Manager scope",
        help_text="Topology Manager scope",
    )
    min_free_exclusive_cpus_in_one_zone = MinFreeCpusFilter(
        field_name="figures__max_free_cpus_in_one_zone",
        lookup_expr="gte",
        min_value=0,
        label="Zone with ≥ N free exclusive CPUs",
        help_text="some NUMA zone has at least this many free exclusive CPUs "
        "(nodes whose figures are not computed yet are left out)",
        widget=forms.NumberInput(attrs={"min": 0, "step": 1}),
    )
    ordering = django_filters.OrderingFilter(
        fields=NODE_ORDERING,
        field_labels=ORDERING_LABELS,
        label="Sort by",
    )

    class Meta:
        model = Node
        fields: list[str] = []

    def filter_labels(self, queryset: QuerySet[Node], name: str, value: str) -> QuerySet[Node]:
        """Each term ANDed; a JSON key compared with a JSON string, which PostgreSQL and
        SQLite both run (SQLite has no `contains`, and there a KeyTextTransform compared
        with text makes SQLite parse the text as JSON). The key is passed as an
        expression, never spliced into a lookup path, so keys with dots, slashes or "__"
        all work."""
        for index, term in enumerate(t for t in value.split(",") if t.strip()):
            key, wanted = parse_label(term)
            if not key:
                continue
            queryset = queryset.filter(labels__has_key=key)
            if wanted is not None:
                alias = f"_label_{index}"
                queryset = queryset.alias(**{alias: KeyTransform(key, "labels")}).filter(
                    **{alias: wanted}
                )
        return queryset


RESERVATION_ORDERING = (
    ("name", "name"),
    ("node_name", "node"),
    ("phase", "phase"),
    ("expires", "expires"),
)
"""The Reservation sort names, the same in the API's and the dashboard's `ordering`."""


class ReservationFilterSet(django_filters.FilterSet):
    """The dashboard's Reservations list: by node and phase, sorted; names as in the API."""

    node = django_filters.CharFilter(
        field_name="node_name",
        label="Node",
        help_text="the node's name, exactly",
        widget=forms.TextInput(attrs={"placeholder": "node name"}),
    )
    phase = django_filters.ChoiceFilter(
        choices=ReservationPhase.choices, label="Phase", empty_label="any"
    )
    ordering = django_filters.OrderingFilter(
        fields=RESERVATION_ORDERING,
        field_labels={"node_name": "node", "expires": "expires (the expires field)"},
        label="Sort by",
    )

    class Meta:
        model = Reservation
        fields: list[str] = []


class DiagnosisFilterSet(django_filters.FilterSet):
    namespace = django_filters.CharFilter()
    node = django_filters.CharFilter(
        field_name="node_name", help_text="the node a rejected pod was bound to"
    )
    reason = django_filters.CharFilter(help_text="e.g. Unschedulable, TopologyAffinityError")
    state = django_filters.ChoiceFilter(choices=DiagnosisState.choices)

    class Meta:
        model = PodDiagnosis
        fields: list[str] = []


class FindingFilterSet(django_filters.FilterSet):
    kind = django_filters.ChoiceFilter(choices=FindingKind.choices)
    severity = django_filters.ChoiceFilter(choices=Severity.choices)
    node = django_filters.CharFilter(field_name="node_name", help_text="node name")

    class Meta:
        model = Finding
        fields: list[str] = []


class AgreementFilterSet(django_filters.FilterSet):
    verdict = django_filters.ChoiceFilter(choices=AgreementVerdict.choices)
    system = django_filters.CharFilter(help_text="koordinator, crane, scheduler-plugins, default")
    node = django_filters.CharFilter(field_name="node_name", help_text="node name")

    class Meta:
        model = PodAgreement
        fields: list[str] = []


class PredictionFilterSet(django_filters.FilterSet):
    status = django_filters.ChoiceFilter(choices=PredictionStatus.choices)

    class Meta:
        model = TrackedPrediction
        fields: list[str] = []
