"""The cluster overview: one page of nodes with their NUMA zones, and a summary of all.

It stays usable at 5,000 nodes because only one page of nodes is turned into
rows (a fixed number of queries whatever the page size), while the summary is
computed by the database over every node matching the filters.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from django.core.paginator import Page, Paginator
from django.db.models import Case, Count, IntegerField, QuerySet, Sum, Value, When

from topology.filtersets import NodeFilterSet
from topology.models import Cluster, Node, NodeFigures, Zone, ZoneResource
from topology.selectors.common import page_notice, related_or_none
from topology.selectors.types import (
    Amounts,
    Bucket,
    FiguresView,
    NodeRow,
    OverviewSummary,
    PolicyFree,
    ZoneCell,
)

PAGE_SIZE = 60
# Upper bounds of the "largest free block in one zone" buckets; -1 marks "not computed".
BUCKET_EDGES = (1, 4, 8, 16, 32, 64)
_NOT_COMPUTED = -1


@dataclass(frozen=True)
class OverviewData:
    filterset: NodeFilterSet
    page: Page[Node]
    rows: list[NodeRow]
    summary: OverviewSummary
    page_notice: str = ""


def overview_data(cluster: Cluster, params: Mapping[str, str]) -> OverviewData:
    """The filtered, sorted, paged overview of one cluster; a fixed number of queries."""
    filterset = NodeFilterSet(params or None, queryset=cluster_nodes(cluster))
    nodes = filterset.qs
    paginator = Paginator(nodes, PAGE_SIZE)
    asked = params.get("page")
    page = paginator.get_page(asked)
    shown = list(page.object_list)
    zones = zones_of([node.topology.pk for node in shown if has_topology(node)])
    rows = [node_row(node, zones) for node in shown]
    summary = overview_summary(nodes, paginator.count)
    return OverviewData(filterset, page, rows, summary, page_notice(asked, page))


def cluster_nodes(cluster: Cluster) -> QuerySet[Node]:
    """Nodes with what a row needs and nothing heavy (raw NRT JSON, CPU tables)."""
    return (
        Node.objects.filter(cluster=cluster)
        .select_related("topology", "figures")
        .defer(
            "annotations",
            "capacity",
            "allocatable",
            "topology__raw",
            "topology__cpu_table",
            "topology__koordlet",
            "topology__attributes",
        )
        .order_by("name")
    )


def has_topology(node: Node) -> bool:
    return related_or_none(node, "topology") is not None


ZoneRows = dict[int, list[tuple[int, str, dict[str, Amounts]]]]


def zones_of(topology_ids: Sequence[int]) -> ZoneRows:
    """NUMA zones and their resources of these topologies: two plain queries, no models.

    Plain rows rather than prefetched model instances: at a page of 60 nodes x 8 zones
    x 3 resources, building models costs more than the queries.
    """
    zones: ZoneRows = defaultdict(list)
    resources: dict[int, dict[str, Amounts]] = defaultdict(dict)
    numa = Zone.objects.filter(topology_id__in=topology_ids, numa_id__isnull=False)
    for zone_id, name, capacity, allocatable, available in ZoneResource.objects.filter(
        zone__in=numa
    ).values_list("zone_id", "name", "capacity", "allocatable", "available"):
        resources[zone_id][name] = Amounts(capacity, allocatable, available)
    for zone_id, topology_id, numa_id, name in numa.order_by("numa_id").values_list(
        "id", "topology_id", "numa_id", "name"
    ):
        zones[topology_id].append((numa_id, name, resources[zone_id]))
    return zones


def figures_view(figures: NodeFigures | None) -> FiguresView | None:
    if figures is None:
        return None
    return FiguresView(
        computed_at=figures.computed_at,
        free_cpus_total=figures.free_cpus_total,
        max_free_cpus_in_one_zone=figures.max_free_cpus_in_one_zone,
        largest_exclusive_pod_own_policy=figures.largest_exclusive_pod_own_policy,
        largest_exclusive_pod=dict(figures.largest_exclusive_pod or {}),
        free_cpus_by_zone={int(k): int(v) for k, v in (figures.free_cpus_by_zone or {}).items()},
    )


def node_row(node: Node, zones: ZoneRows) -> NodeRow:
    topology = related_or_none(node, "topology")
    figures = figures_view(related_or_none(node, "figures"))
    if topology is None:
        return NodeRow(name=node.name, unschedulable=node.unschedulable, figures=figures)
    free = figures.free_cpus_by_zone if figures else {}
    cells = tuple(
        ZoneCell(numa_id, name, resources, free.get(numa_id) if figures else None)
        for numa_id, name, resources in zones.get(topology.pk, ())
    )
    return NodeRow(
        name=node.name,
        flavour=topology.flavour,
        policy=topology.tm_policy,
        scope=topology.tm_scope,
        unschedulable=node.unschedulable,
        nrt_changed_at=topology.observed_at,
        zones=cells,
        figures=figures,
    )


def overview_summary(nodes: QuerySet[Node], count: int) -> OverviewSummary:
    """Aggregates over every matching node: four queries whatever the cluster size."""
    plain = nodes.order_by()
    per_policy = (
        plain.values("topology__tm_policy")
        .annotate(n=Count("id"), computed=Count("figures"), free=Sum("figures__free_cpus_total"))
        .order_by("topology__tm_policy")
    )
    free_by_policy = tuple(
        PolicyFree(row["topology__tm_policy"] or "", row["n"], row["computed"], row["free"] or 0)
        for row in per_policy
    )
    largest = (
        plain.filter(figures__isnull=False)
        .order_by("-figures__largest_exclusive_pod_own_policy", "name")
        .values_list("name", "figures__largest_exclusive_pod_own_policy")
        .first()
    )
    zones = Zone.objects.filter(topology__node__in=plain.values("id"), numa_id__isnull=False)
    return OverviewSummary(
        nodes=count,
        zones=zones.count(),
        computed=sum(p.computed for p in free_by_policy),
        free_by_policy=free_by_policy,
        largest_pod=largest[1] if largest else None,
        largest_pod_node=largest[0] if largest else None,
        distribution=_distribution(plain),
    )


def _bucket_expression() -> Case:
    whens = [When(figures__isnull=True, then=Value(_NOT_COMPUTED))]
    whens += [
        When(figures__max_free_cpus_in_one_zone__lt=edge, then=Value(index))
        for index, edge in enumerate(BUCKET_EDGES)
    ]
    return Case(*whens, default=Value(len(BUCKET_EDGES)), output_field=IntegerField())


def bucket_labels() -> list[str]:
    labels, low = [], 0
    for edge in BUCKET_EDGES:
        labels.append(str(low) if edge - 1 == low else f"{low}–{edge - 1}")
        low = edge
    return [*labels, f"≥ {low}"]


def _distribution(nodes: QuerySet[Node]) -> tuple[Bucket, ...]:
    """Nodes by their largest block of free exclusive CPUs in one zone; one GROUP BY."""
    counts = {
        row["bucket"]: row["n"]
        for row in nodes.annotate(bucket=_bucket_expression())
        .values("bucket")
        .annotate(n=Count("id"))
    }
    buckets = [Bucket(label, counts.get(i, 0)) for i, label in enumerate(bucket_labels())]
    buckets.append(Bucket("not computed yet", counts.get(_NOT_COMPUTED, 0), computed=False))
    return tuple(buckets)
