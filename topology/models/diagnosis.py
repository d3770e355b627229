"""What Topolens concludes about the cluster as it is: pods' warning events (mirrored),
pod diagnoses and data-truth findings (computed by `topology.services.diagnosis`)."""

from __future__ import annotations

from typing import Any

from django.db import models

from topology.choices import DiagnosisState, FindingKind, Severity
from topology.models.mirror import Cluster, ObservedModel


class PodEvent(ObservedModel):
    """A Warning event about a pod that explains a placement failure, one row per Event
    object. Pages and the API show them deduplicated by pod and reason, as
    `kubectl get events` does (count summed, last seen the latest). A row stays when the
    API server expires the Event: the housekeeping job prunes by age and count
    (settings TOPOLENS_EVENT_RETENTION_SECONDS / TOPOLENS_EVENT_RETENTION_COUNT)."""

    cluster = models.ForeignKey(Cluster, on_delete=models.CASCADE, related_name="pod_events")
    namespace = models.CharField(max_length=253)
    name = models.CharField(max_length=253, help_text="the Event object's name")
    pod_name = models.CharField(max_length=253, help_text="involvedObject.name")
    pod_uid = models.CharField(max_length=64, blank=True, help_text="involvedObject.uid")
    reason = models.CharField(max_length=128)
    message = models.TextField(blank=True)
    source = models.CharField(max_length=253, blank=True, help_text="the component that wrote it")
    count = models.PositiveIntegerField(default=1)
    first_seen = models.DateTimeField(null=True, blank=True)
    last_seen = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["cluster", "-last_seen"]
        constraints = [
            models.UniqueConstraint(
                fields=["cluster", "namespace", "name"], name="pod_event_unique_name"
            )
        ]
        indexes = [
            models.Index(fields=["cluster", "namespace", "pod_name"], name="pod_event_pod_idx"),
            models.Index(fields=["cluster", "last_seen"], name="pod_event_age_idx"),
        ]

    def __str__(self) -> str:
        return f"{self.namespace}/{self.pod_name}: {self.reason}"


class PodDiagnosis(models.Model):
    """Why one Pending pod does not bind, or why the kubelet rejected one: the JSON of
    `manage.py diagnose` for that pod in `body`, a few of its fields as columns to filter."""

    cluster = models.ForeignKey(Cluster, on_delete=models.CASCADE, related_name="diagnoses")
    namespace = models.CharField(max_length=253)
    name = models.CharField(max_length=253)
    state = models.CharField(max_length=16, choices=DiagnosisState.choices)
    reason = models.CharField(max_length=128, blank=True, help_text="the event or status reason")
    node_name = models.CharField(
        max_length=253, blank=True, help_text="the node it was bound to (rejected pods)"
    )
    scheduler = models.CharField(max_length=32, blank=True, help_text="the system that judged it")
    fits_now = models.PositiveIntegerField(default=0)
    body = models.JSONField(
        default=dict, help_text="the diagnosis but its data age (the cluster's last refresh)"
    )
    computed_at = models.DateTimeField(help_text="when its content last changed")
    mirror_version = models.PositiveBigIntegerField(default=0)

    class Meta:
        ordering = ["cluster", "namespace", "name"]
        constraints = [
            models.UniqueConstraint(
                fields=["cluster", "namespace", "name"], name="pod_diagnosis_unique_name"
            )
        ]

    def __str__(self) -> str:
        return f"{self.namespace}/{self.name} ({self.state})"

    def as_json(self, cluster: Cluster | None = None) -> dict[str, Any]:
        """The diagnosis as `manage.py diagnose` prints it, as of the cluster's last
        refresh (each refresh confirms every stored diagnosis; it rewrites only those
        that changed): its data age, time and mirror version."""
        refreshed = cluster or self.cluster
        at = refreshed.diagnosed_at or self.computed_at
        return {
            **self.body,
            "stale_data": refreshed.diagnosed_stale,
            "data_age_seconds": refreshed.diagnosed_data_age_seconds,
            "computed_at": at.isoformat(),
            "mirror_version": refreshed.diagnosed_version or self.mirror_version,
        }


class Finding(models.Model):
    """One data-truth finding (README, "Findings"): what is wrong where, with evidence."""

    cluster = models.ForeignKey(Cluster, on_delete=models.CASCADE, related_name="findings")
    kind = models.CharField(max_length=32, choices=FindingKind.choices)
    severity = models.CharField(max_length=16, choices=Severity.choices)
    node_name = models.CharField(max_length=253, blank=True)
    object = models.CharField(max_length=512, blank=True, help_text="e.g. namespace/pod")
    message = models.TextField()
    evidence = models.JSONField(default=dict, blank=True)
    computed_at = models.DateTimeField()

    class Meta:
        ordering = ["cluster", "kind", "node_name", "object"]
        indexes = [
            models.Index(fields=["cluster", "kind"], name="finding_kind_idx"),
            models.Index(fields=["cluster", "node_name"], name="finding_node_idx"),
        ]

    def __str__(self) -> str:
        return f"{self.kind}: {self.node_name or self.object}"
