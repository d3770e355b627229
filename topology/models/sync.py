"""How the live sync reaches each cluster and how fresh each mirrored collection is."""

from __future__ import annotations

from django.core.exceptions import ValidationError
from django.db import models

from topology.choices import (
    ConnectionMode,
    SyncResource,
)
from topology.models.mirror import Cluster
from topology.parsers.names import DNS_LABEL, DNS_SUBDOMAIN


def configmap_reference_error(reference: str) -> str | None:
    """Why `reference` is not `namespace/name` of a ConfigMap (None: it is)."""
    namespace, slash, name = reference.partition("/")
    if not slash:
        return "write it as namespace/name"
    if not DNS_LABEL.fullmatch(namespace):
        return f"{namespace!r} is not a Kubernetes namespace name"
    if not DNS_SUBDOMAIN.fullmatch(name):
        return f"{name!r} is not a ConfigMap name"
    return None


class ClusterConnection(models.Model):
    """How Topolens reaches a cluster's API server: the only rows that hold credentials.

    Kept apart from Cluster so that nothing that lists, logs or serialises a Cluster can
    leak where its credentials live. `__str__` names the cluster only.
    """

    cluster = models.OneToOneField(Cluster, on_delete=models.CASCADE, related_name="connection")
    mode = models.CharField(max_length=16, choices=ConnectionMode.choices)
    kubeconfig_path = models.CharField(
        max_length=1024, blank=True, help_text="path of a kubeconfig file the workers can read"
    )
    context = models.CharField(
        max_length=253, blank=True, help_text="kubeconfig context; empty: its current context"
    )
    enabled = models.BooleanField(
        default=True, help_text="keep the mirror synced: watch, and resync periodically"
    )
    scheduler_configmap = models.CharField(
        max_length=507,
        blank=True,
        help_text="namespace/name of the ConfigMap holding the cluster's "
        "KubeSchedulerConfiguration (e.g. koordinator-system/koord-scheduler-config): "
        "its profiles are synced; empty: none (upload documents in Scheduler configurations)",
    )
    updated_at = models.DateTimeField(auto_now=True)

    def __str__(self) -> str:
        return f"connection of {self.cluster.name}"

    def clean(self) -> None:
        if self.scheduler_configmap and configmap_reference_error(self.scheduler_configmap):
            raise ValidationError(
                {"scheduler_configmap": configmap_reference_error(self.scheduler_configmap)}
            )
        if self.mode == ConnectionMode.KUBECONFIG and not self.kubeconfig_path:
            raise ValidationError({"kubeconfig_path": "a kubeconfig connection needs its path"})
        if self.mode == ConnectionMode.IN_CLUSTER and (self.kubeconfig_path or self.context):
            raise ValidationError("an in-cluster connection takes no kubeconfig path or context")


class SyncState(models.Model):
    """How fresh one collection of one cluster is; written by the sync, read by everyone.

    `synced_through` is the time up to which the mirror of this collection is known equal
    to the cluster: the end of the last full list, or the receipt of the last event or
    bookmark applied while the watch was healthy.
    """

    cluster = models.ForeignKey(Cluster, on_delete=models.CASCADE, related_name="sync_states")
    resource = models.CharField(max_length=64, choices=SyncResource.choices)
    served = models.BooleanField(default=True, help_text="false: the cluster does not serve it")
    skipped_reason = models.CharField(max_length=300, blank=True, help_text="why it is not synced")
    api_version = models.CharField(max_length=128, blank=True, help_text="group/version read")
    resource_version = models.CharField(max_length=64, blank=True, help_text="last one seen")
    last_full_list_at = models.DateTimeField(null=True, blank=True)
    listed_count = models.PositiveIntegerField(default=0, help_text="objects in the last list")
    last_event_at = models.DateTimeField(null=True, blank=True)
    last_bookmark_at = models.DateTimeField(null=True, blank=True)
    events_applied = models.PositiveBigIntegerField(default=0)
    synced_through = models.DateTimeField(null=True, blank=True)
    lag_seconds = models.FloatField(
        null=True, blank=True, help_text="event received → committed, worst of the last batch"
    )
    consecutive_errors = models.PositiveIntegerField(default=0)
    last_error = models.TextField(blank=True)
    last_error_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["cluster", "resource"]
        constraints = [
            models.UniqueConstraint(fields=["cluster", "resource"], name="sync_state_unique")
        ]

    def __str__(self) -> str:
        return f"{self.cluster.name}: {self.resource}"


class SyncError(models.Model):
    """One object the sync could not mirror, and why; cleared when it syncs again."""

    cluster = models.ForeignKey(Cluster, on_delete=models.CASCADE, related_name="sync_errors")
    resource = models.CharField(max_length=64, choices=SyncResource.choices)
    object_name = models.CharField(max_length=512, help_text="name, or namespace/name")
    field = models.CharField(max_length=512, blank=True)
    message = models.TextField()
    first_seen_at = models.DateTimeField()
    last_seen_at = models.DateTimeField()
    occurrences = models.PositiveIntegerField(default=1)

    class Meta:
        ordering = ["-last_seen_at"]
        constraints = [
            models.UniqueConstraint(
                fields=["cluster", "resource", "object_name"], name="sync_error_unique"
            )
        ]

    def __str__(self) -> str:
        return f"{self.resource} {self.object_name}: {self.field}"


class SyncLease(models.Model):
    """Which session watches a cluster now: at most one live owner, renewed while it runs.

    A periodic full resync asks the live owner to re-list (so that its list and the
    watch's events are applied in order) instead of writing beside it.
    """

    cluster = models.OneToOneField(Cluster, on_delete=models.CASCADE, related_name="sync_lease")
    owner = models.CharField(max_length=200, blank=True)
    expires_at = models.DateTimeField(null=True, blank=True)
    resync_requested_at = models.DateTimeField(null=True, blank=True)
    watch_enqueued_at = models.DateTimeField(
        null=True, blank=True, help_text="a watch task is queued: do not queue another"
    )

    def __str__(self) -> str:
        return f"sync lease of {self.cluster.name}"
