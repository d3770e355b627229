"""Admin: observed state is read-only (it comes from the cluster); desired policy is editable."""

from __future__ import annotations

from typing import Any

from django.contrib import admin
from django.db.models import Count, QuerySet
from django.http import HttpRequest

from topology.models import (
    Cluster,
    Node,
    NodeCPUReservation,
    NodePolicy,
    NodeTopology,
    Pod,
    PodAllocation,
    QoSConfig,
    QoSStrategy,
    ResctrlSetting,
    Reservation,
    Zone,
    ZoneResource,
)


class ReadOnlyAdmin(admin.ModelAdmin):
    """Observed rows change only through import/sync."""

    def has_add_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False


class ReadOnlyInline(admin.TabularInline):
    extra = 0
    can_delete = False
    show_change_link = True

    def has_add_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False


@admin.register(Cluster)
class ClusterAdmin(admin.ModelAdmin):
    list_display = ["name", "description", "node_count", "last_imported_at"]
    search_fields = ["name"]

    def get_queryset(self, request: HttpRequest) -> QuerySet[Cluster]:
        return super().get_queryset(request).annotate(node_total=Count("nodes"))

    @admin.display(description="nodes", ordering="node_total")
    def node_count(self, obj: Cluster) -> int:
        return obj.node_total  # type: ignore[attr-defined]


class ZoneInline(ReadOnlyInline):
    model = Zone
    fields = ["name", "zone_type", "numa_id", "parent", "costs"]


@admin.register(Node)
class NodeAdmin(ReadOnlyAdmin):
    list_display = ["name", "cluster", "flavour", "policy", "scope", "cpu", "observed_at"]
    list_filter = ["cluster", "topology__flavour", "topology__tm_policy", "unschedulable"]
    search_fields = ["name"]
    list_select_related = ["cluster", "topology"]

    @admin.display(description="flavour", ordering="topology__flavour")
    def flavour(self, obj: Node) -> str:
        return obj.topology.flavour if hasattr(obj, "topology") else "—"

    @admin.display(description="policy", ordering="topology__tm_policy")
    def policy(self, obj: Node) -> str:
        return obj.topology.tm_policy if hasattr(obj, "topology") else "—"

    @admin.display(description="scope")
    def scope(self, obj: Node) -> str:
        return obj.topology.tm_scope if hasattr(obj, "topology") else "—"

    @admin.display(description="allocatable cpu")
    def cpu(self, obj: Node) -> str:
        return f"{obj.allocatable.get('cpu', 0) / 1000:g}"


@admin.register(NodeTopology)
class NodeTopologyAdmin(ReadOnlyAdmin):
    list_display = ["node", "flavour", "tm_policy", "tm_scope", "cpu_count", "observed_at"]
    list_filter = ["node__cluster", "flavour", "tm_policy", "tm_scope"]
    search_fields = ["node__name"]
    list_select_related = ["node__cluster"]
    exclude = ["cpu_table"]
    inlines = [ZoneInline]


class ZoneResourceInline(ReadOnlyInline):
    model = ZoneResource
    fields = ["name", "capacity", "allocatable", "available"]


@admin.register(Zone)
class ZoneAdmin(ReadOnlyAdmin):
    list_display = ["name", "topology", "numa_id", "zone_type"]
    list_filter = ["topology__node__cluster", "zone_type"]
    search_fields = ["topology__node__name"]
    inlines = [ZoneResourceInline]


@admin.register(ZoneResource)
class ZoneResourceAdmin(ReadOnlyAdmin):
    list_display = ["zone", "name", "capacity", "allocatable", "available"]
    list_filter = ["zone__topology__node__cluster", "name"]
    search_fields = ["zone__topology__node__name"]


@admin.register(NodeCPUReservation)
class NodeCPUReservationAdmin(ReadOnlyAdmin):
    list_display = ["node", "reserved_cpus", "resolved_cpus", "apply_policy"]
    list_filter = ["node__cluster", "apply_policy"]
    search_fields = ["node__name"]


class AllocationInline(ReadOnlyInline):
    model = PodAllocation
    fk_name = "pod"
    fields = ["source", "node_name", "cpuset", "numa_resources"]


@admin.register(Pod)
class PodAdmin(ReadOnlyAdmin):
    list_display = ["name", "namespace", "node_name", "qos_class", "phase", "cluster"]
    list_filter = ["cluster", "qos_class", "phase", "namespace"]
    search_fields = ["name", "node_name", "namespace"]
    inlines = [AllocationInline]


@admin.register(PodAllocation)
class PodAllocationAdmin(ReadOnlyAdmin):
    list_display = ["pod_name", "namespace", "node_name", "source", "cpuset"]
    list_filter = ["cluster", "source"]
    search_fields = ["pod_name", "node_name"]


@admin.register(Reservation)
class ReservationAdmin(ReadOnlyAdmin):
    list_display = ["name", "cluster", "phase", "node_name", "allocate_once", "cpuset"]
    list_filter = ["cluster", "phase", "allocate_once"]
    search_fields = ["name", "node_name"]


class StrategyInline(ReadOnlyInline):
    model = QoSStrategy
    fields = ["position", "name", "node_selector"]


@admin.register(QoSConfig)
class QoSConfigAdmin(ReadOnlyAdmin):
    list_display = ["cluster", "namespace", "name", "resource_version", "observed_at"]
    list_filter = ["cluster"]
    inlines = [StrategyInline]


class ResctrlInline(ReadOnlyInline):
    model = ResctrlSetting
    fields = [
        "qos_class",
        "enable",
        "cat_range_start_percent",
        "cat_range_end_percent",
        "mba_percent",
    ]


@admin.register(QoSStrategy)
class QoSStrategyAdmin(ReadOnlyAdmin):
    list_display = ["__str__", "config", "position"]
    list_filter = ["config__cluster"]
    inlines = [ResctrlInline]


@admin.register(NodePolicy)
class NodePolicyAdmin(admin.ModelAdmin):
    """Desired state; applying it to the cluster comes with the policy issue."""

    list_display = [
        "node",
        "numa_topology_policy",
        "numa_allocate_strategy",
        "cpu_bind_policy",
        "crane_topology_awareness",
        "reservation_cpus",
        "updated_at",
    ]
    list_filter = ["node__cluster", "numa_topology_policy", "cpu_bind_policy"]
    search_fields = ["node__name"]
    autocomplete_fields = ["node"]
