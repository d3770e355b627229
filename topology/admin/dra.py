"""DRA objects (ResourceSlices, ResourceClaims): mirrored, so read-only."""

from __future__ import annotations

from django.contrib import admin

from topology.admin.base import ReadOnlyAdmin, ReadOnlyInline
from topology.models import (
    ResourceClaim,
    ResourceClaimDevice,
    ResourceSlice,
    ResourceSliceDevice,
)


class ResourceSliceDeviceInline(ReadOnlyInline):
    model = ResourceSliceDevice
    fields = ["name", "numa_node", "numa_attribute", "attributes", "capacity"]
    show_change_link = False


@admin.register(ResourceSlice)
class ResourceSliceAdmin(ReadOnlyAdmin):
    list_display = ["name", "cluster", "driver", "pool", "node_name", "observed_at"]
    list_filter = ["cluster", "driver"]
    search_fields = ["name", "node_name", "pool"]
    inlines = [ResourceSliceDeviceInline]


@admin.register(ResourceSliceDevice)
class ResourceSliceDeviceAdmin(ReadOnlyAdmin):
    list_display = ["name", "driver", "pool", "node_name", "numa_node", "cluster"]
    list_filter = ["cluster", "driver", "numa_node"]
    search_fields = ["name", "node_name", "pool"]


class ResourceClaimDeviceInline(ReadOnlyInline):
    model = ResourceClaimDevice
    fields = ["request", "driver", "pool", "device"]
    show_change_link = False


@admin.register(ResourceClaim)
class ResourceClaimAdmin(ReadOnlyAdmin):
    list_display = ["name", "namespace", "cluster", "observed_at"]
    list_filter = ["cluster", "namespace"]
    search_fields = ["name", "namespace"]
    inlines = [ResourceClaimDeviceInline]
