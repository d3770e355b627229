"""What admins and operators want: desired node policies, reference pods, QoS drafts,
and the audit trail of every write-back to a cluster.
"""

from __future__ import annotations

from django.conf import settings
from django.db import models

from topology.choices import (
    ApplyStatus,
    KoordNUMATopologyPolicy,
    NodeCPUBindPolicy,
    NUMAAllocateStrategy,
    ReservationApplyPolicy,
    WriteKind,
)
from topology.models.mirror import Cluster, Node


class NodePolicy(models.Model):
    """Desired state for a node, kept apart from what was observed. Null means 'leave as is'."""

    node = models.OneToOneField(Node, on_delete=models.CASCADE, related_name="desired_policy")
    # null ("leave as observed") must differ from "" (Koordinator's None policy).
    numa_topology_policy = models.CharField(  # noqa: DJ001
        max_length=32, choices=KoordNUMATopologyPolicy.choices, null=True, blank=True
    )
    numa_allocate_strategy = models.CharField(  # noqa: DJ001
        max_length=32, choices=NUMAAllocateStrategy.choices, null=True, blank=True
    )
    cpu_bind_policy = models.CharField(  # noqa: DJ001
        max_length=32, choices=NodeCPUBindPolicy.choices, null=True, blank=True
    )
    crane_topology_awareness = models.BooleanField(null=True, blank=True)
    reservation_cpus = models.TextField(blank=True, help_text="cpulist to reserve")
    reservation_cpu_count = models.PositiveIntegerField(null=True, blank=True)
    reservation_apply_policy = models.CharField(
        max_length=32, choices=ReservationApplyPolicy.choices, blank=True
    )
    updated_at = models.DateTimeField(auto_now=True)

    FIELDS = (  # the desired-state fields, in the order every page and API lists them
        "numa_topology_policy",
        "numa_allocate_strategy",
        "cpu_bind_policy",
        "crane_topology_awareness",
        "reservation_cpus",
        "reservation_cpu_count",
        "reservation_apply_policy",
    )

    class Meta:
        verbose_name_plural = "node policies"

    def __str__(self) -> str:
        return f"desired policy of {self.node}"


class ReferencePod(models.Model):
    """A pod shape operators keep to preview what a draft policy does to placement.

    With no saved ones, previews use a 4-, 8- and 16-CPU exclusive pod. `manifest`, when
    set, is a whole Pod manifest and wins over `cpus` / `memory`.
    """

    cluster = models.ForeignKey(
        Cluster,
        on_delete=models.CASCADE,
        related_name="reference_pods",
        null=True,
        blank=True,
        help_text="empty: used for every cluster",
    )
    name = models.SlugField(max_length=100)
    cpus = models.PositiveIntegerField(default=4, help_text="exclusive CPUs (Guaranteed pod)")
    memory = models.CharField(max_length=32, default="1Gi", help_text="a Kubernetes quantity")
    manifest = models.JSONField(null=True, blank=True, help_text="a Pod manifest; wins if set")

    class Meta:
        ordering = ["cpus", "name"]
        constraints = [
            models.UniqueConstraint(fields=["cluster", "name"], name="reference_pod_unique")
        ]

    def __str__(self) -> str:
        return self.name


class QoSDraft(models.Model):
    """An edited slo-controller-config ConfigMap `data`, waiting to be applied.

    `data` holds every ConfigMap key as text, as it would be written; `base_resource_version`
    is the ConfigMap version the edit started from, which guards the write-back.
    """

    cluster = models.OneToOneField(Cluster, on_delete=models.CASCADE, related_name="qos_draft")
    data = models.JSONField(default=dict, help_text="ConfigMap data key → text")
    base_resource_version = models.CharField(max_length=64, blank=True)
    updated_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        verbose_name = "QoS draft"

    def __str__(self) -> str:
        return f"QoS draft of {self.cluster.name}"


class ApplyRecord(models.Model):
    """The audit trail: one row per write-back Topolens attempted, whatever came of it.

    Names are copied, not only linked, so that history survives a deleted cluster or user.
    """

    cluster = models.ForeignKey(
        Cluster, on_delete=models.SET_NULL, null=True, blank=True, related_name="applies"
    )
    cluster_name = models.CharField(max_length=100)
    kind = models.CharField(max_length=32, choices=WriteKind.choices)
    object_name = models.CharField(max_length=512, help_text="name, or namespace/name")
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )
    username = models.CharField(max_length=150)
    requested_at = models.DateTimeField(auto_now_add=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    patch = models.JSONField(default=dict, help_text="the exact body sent")
    diff = models.TextField(blank=True, help_text="unified diff, before → after")
    resource_version_before = models.CharField(max_length=64, blank=True)
    resource_version_after = models.CharField(max_length=64, blank=True)
    status = models.CharField(
        max_length=16, choices=ApplyStatus.choices, default=ApplyStatus.PENDING, db_index=True
    )
    message = models.TextField(blank=True)
    cluster_version = models.JSONField(
        null=True, blank=True, help_text="on a conflict: the object as the cluster has it now"
    )
    queued_at = models.DateTimeField(
        null=True, blank=True, help_text="when its task was last sent to the workers"
    )
    times_queued = models.PositiveIntegerField(
        default=0, help_text="how often its task was sent (again when a task was lost)"
    )

    class Meta:
        ordering = ["-requested_at", "-id"]
        indexes = [models.Index(fields=["cluster_name", "-requested_at"])]

    def __str__(self) -> str:
        return f"{self.kind} {self.object_name} on {self.cluster_name}: {self.status}"
