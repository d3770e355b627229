"""Admin for the observed mirror and cluster connections: read-only but for connections."""

from __future__ import annotations

from typing import Any

from django.contrib import admin, messages
from django.db.models import Count, Exists, OuterRef, QuerySet, Subquery
from django.http import HttpRequest

from topology.admin.base import ReadOnlyAdmin, ReadOnlyInline
from topology.models import (
    Cluster,
    ClusterConnection,
    Node,
    NodeCPUReservation,
    NodeTopology,
    Pod,
    PodAllocation,
    Reservation,
    SyncError,
    SyncState,
    Zone,
    ZoneResource,
)
from topology.services.sync.enqueue import enqueue_resync, enqueue_schedules, enqueue_watch


class ConnectionInline(admin.StackedInline):
    """Where the credentials live. Editable here; shown in no list, API or log."""

    model = ClusterConnection
    extra = 0
    max_num = 1
    can_delete = True
    fields = ["mode", "kubeconfig_path", "context", "enabled", "scheduler_configmap"]


# A sync state's columns, in the cluster's inline and in the list of every state.
SYNC_STATE_COLUMNS = [
    "resource",
    "served",
    "api_version",
    "last_full_list_at",
    "last_event_at",
    "synced_through",
    "lag_seconds",
    "consecutive_errors",
    "last_error",
]


class SyncStateInline(ReadOnlyInline):
    model = SyncState
    show_change_link = False
    fields = SYNC_STATE_COLUMNS
    readonly_fields = fields


@admin.register(Cluster)
class ClusterAdmin(admin.ModelAdmin):
    list_display = [
        "name",
        "description",
        "node_count",
        "connection_mode",
        "synced_through",
        "sync_error_count",
        "last_imported_at",
    ]
    search_fields = ["name"]
    readonly_fields = ["last_imported_at", "mirror_version"]
    inlines = [ConnectionInline, SyncStateInline]
    actions = ["resync_now", "watch_now"]

    def get_queryset(self, request: HttpRequest) -> QuerySet[Cluster]:
        served = SyncState.objects.filter(cluster=OuterRef("pk"), served=True)
        errors = (
            SyncError.objects.filter(cluster=OuterRef("pk"))
            .values("cluster")
            .annotate(total=Count("pk"))
            .values("total")
        )
        return (
            super()
            .get_queryset(request)
            .select_related("connection")
            .annotate(
                node_total=Count("nodes"),
                oldest_sync=Subquery(
                    served.order_by("synced_through").values("synced_through")[:1]
                ),
                never_synced=Exists(served.filter(synced_through__isnull=True)),
                error_total=Subquery(errors[:1]),
            )
        )

    @admin.display(description="nodes", ordering="node_total")
    def node_count(self, obj: Cluster) -> int:
        return obj.node_total  # type: ignore[attr-defined]

    @admin.display(description="connection")
    def connection_mode(self, obj: Cluster) -> str:
        """The mode only: where the credentials are is no list's business."""
        connection = getattr(obj, "connection", None)
        if connection is None:
            return "imports only"
        return connection.get_mode_display() + ("" if connection.enabled else " (disabled)")

    @admin.display(description="synced through", ordering="oldest_sync")
    def synced_through(self, obj: Cluster) -> Any:
        if obj.never_synced or obj.oldest_sync is None:  # type: ignore[attr-defined]
            return "—"
        return obj.oldest_sync  # type: ignore[attr-defined]

    @admin.display(description="sync errors", ordering="error_total")
    def sync_error_count(self, obj: Cluster) -> int:
        return obj.error_total or 0  # type: ignore[attr-defined]

    @admin.action(description="Resync the selected clusters now")
    def resync_now(self, request: HttpRequest, queryset: QuerySet[Cluster]) -> None:
        clusters = [c for c in queryset if hasattr(c, "connection")]
        for cluster in clusters:
            enqueue_resync(cluster.pk)
        self.message_user(request, f"full resync queued for {len(clusters)} cluster(s)")

    @admin.action(description="Start watching the selected clusters")
    def watch_now(self, request: HttpRequest, queryset: QuerySet[Cluster]) -> None:
        clusters = [c for c in queryset if getattr(c, "connection", None) and c.connection.enabled]
        for cluster in clusters:
            enqueue_watch(cluster.pk)
        level = messages.INFO if clusters else messages.WARNING
        self.message_user(request, f"watch queued for {len(clusters)} cluster(s)", level)

    def save_related(self, request: HttpRequest, form: Any, formsets: Any, change: bool) -> None:
        """A new or changed connection gets its schedules and a watch, once committed."""
        super().save_related(request, form, formsets, change)
        connection = ClusterConnection.objects.filter(cluster=form.instance).first()
        enqueue_schedules()
        if connection is not None and connection.enabled:
            enqueue_watch(form.instance.pk)


@admin.register(SyncState)
class SyncStateAdmin(ReadOnlyAdmin):
    list_display = ["cluster", *SYNC_STATE_COLUMNS]
    list_filter = ["cluster", "resource", "served"]
    list_select_related = ["cluster"]


@admin.register(SyncError)
class SyncErrorAdmin(ReadOnlyAdmin):
    list_display = [
        "cluster",
        "resource",
        "object_name",
        "field",
        "message",
        "occurrences",
        "last_seen_at",
    ]
    list_filter = ["cluster", "resource"]
    search_fields = ["object_name", "message"]
    list_select_related = ["cluster"]

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return bool(request.user.is_superuser)  # acknowledge (the next sync re-reports)


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
