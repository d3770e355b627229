"""Admin for desired node policies."""

from __future__ import annotations

from django.contrib import admin

from topology.models import NodePolicy


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
