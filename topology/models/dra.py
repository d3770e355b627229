"""The mirror of DRA objects (resource.k8s.io): ResourceSlices and ResourceClaims.

Written only by the import/sync services (`parsers.resource_slice` reads them), shown
read-only. A device is held when an allocated claim names it by (driver, pool, device);
that is worked out when the mirror is read (`selectors.dra`), so the order in which
slices and claims arrive does not matter. Topolens does not judge DRA claims yet.
"""

from __future__ import annotations

from django.db import models

from topology.models.mirror import Cluster, ObservedModel


class ResourceSlice(ObservedModel):
    """One ResourceSlice: some or all devices of one driver's pool."""

    cluster = models.ForeignKey(Cluster, on_delete=models.CASCADE, related_name="resource_slices")
    name = models.CharField(max_length=253)
    api_version = models.CharField(max_length=64)
    driver = models.CharField(max_length=63)
    pool = models.CharField(max_length=253)
    pool_generation = models.BigIntegerField(default=0)
    pool_slice_count = models.BigIntegerField(default=1)
    node_name = models.CharField(
        max_length=253, blank=True, help_text="spec.nodeName; blank: not local to one node"
    )
    node_selection = models.CharField(
        max_length=32, help_text="which of nodeName, nodeSelector, allNodes, perDeviceNodeSelection"
    )

    class Meta:
        ordering = ["cluster", "name"]
        constraints = [
            models.UniqueConstraint(fields=["cluster", "name"], name="resourceslice_unique_name")
        ]

    def __str__(self) -> str:
        return f"{self.cluster.name}/{self.name}"


class ResourceSliceDevice(models.Model):
    """One device a ResourceSlice publishes, with the NUMA node an attribute gives it."""

    resource_slice = models.ForeignKey(
        ResourceSlice, on_delete=models.CASCADE, related_name="devices"
    )
    cluster = models.ForeignKey(Cluster, on_delete=models.CASCADE, related_name="+")
    node_name = models.CharField(max_length=253, blank=True)
    driver = models.CharField(max_length=63)
    pool = models.CharField(max_length=253)
    name = models.CharField(max_length=63)
    numa_node = models.PositiveIntegerField(null=True, blank=True, help_text="null: unknown")
    numa_attribute = models.CharField(
        max_length=128, blank=True, help_text="the attribute that gave the NUMA node"
    )
    attributes = models.JSONField(default=dict, blank=True, help_text="qualified name → value")
    capacity = models.JSONField(
        default=dict, blank=True, help_text="qualified name → exact integer (bytes, counts)"
    )

    class Meta:
        ordering = ["resource_slice", "name"]
        indexes = [
            models.Index(fields=["cluster", "node_name"], name="dra_device_node"),
            models.Index(fields=["cluster", "driver", "pool", "name"], name="dra_device_id"),
        ]

    def __str__(self) -> str:
        return f"{self.driver}/{self.pool}/{self.name}"


class ResourceClaim(ObservedModel):
    """One ResourceClaim: the devices allocated to it and the pods it is reserved for."""

    cluster = models.ForeignKey(Cluster, on_delete=models.CASCADE, related_name="resource_claims")
    namespace = models.CharField(max_length=63)
    name = models.CharField(max_length=253)
    api_version = models.CharField(max_length=64)
    reserved_for = models.JSONField(
        default=list, blank=True, help_text="status.reservedFor: [{resource, name, uid}]"
    )

    class Meta:
        ordering = ["cluster", "namespace", "name"]
        constraints = [
            models.UniqueConstraint(
                fields=["cluster", "namespace", "name"], name="resourceclaim_unique_name"
            )
        ]

    def __str__(self) -> str:
        return f"{self.cluster.name}/{self.namespace}/{self.name}"


class ResourceClaimDevice(models.Model):
    """One allocated device of a claim (status.allocation.devices.results)."""

    claim = models.ForeignKey(ResourceClaim, on_delete=models.CASCADE, related_name="devices")
    cluster = models.ForeignKey(Cluster, on_delete=models.CASCADE, related_name="+")
    request = models.CharField(max_length=128)
    driver = models.CharField(max_length=63)
    pool = models.CharField(max_length=253)
    device = models.CharField(max_length=63)

    class Meta:
        ordering = ["claim", "request", "device"]
        indexes = [
            models.Index(fields=["cluster", "driver", "pool", "device"], name="dra_claim_device"),
        ]

    def __str__(self) -> str:
        return f"{self.driver}/{self.pool}/{self.device}"
