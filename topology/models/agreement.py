"""The agreement audit's results (issue 32): each running pod's verdict, kept per
cluster, and the cluster's rates over time (`topology.services.audit`)."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.db import models

from topology.models.mirror import Cluster


class AgreementVerdict(models.TextChoices):
    AGREE = "agree", "agrees"
    DIFFERS = "differs", "differs"
    NOT_JUDGEABLE = "not-judgeable", "not judgeable"


class PodAgreement(models.Model):
    """One running pod replayed on its node as just before it arrived: the audit's JSON
    for it in `body` (`PodAudit.as_json`), a few fields as columns to filter on."""

    cluster = models.ForeignKey(Cluster, on_delete=models.CASCADE, related_name="agreements")
    namespace = models.CharField(max_length=253)
    name = models.CharField(max_length=253)
    uid = models.CharField(max_length=64, blank=True)
    node_name = models.CharField(max_length=253, blank=True)
    system = models.CharField(max_length=32, blank=True, help_text="the system that judged it")
    verdict = models.CharField(max_length=16, choices=AgreementVerdict.choices)
    body = models.JSONField(default=dict)
    computed_at = models.DateTimeField(help_text="when its content last changed")

    class Meta:
        ordering = ["cluster", "namespace", "name"]
        constraints = [
            models.UniqueConstraint(
                fields=["cluster", "namespace", "name"], name="pod_agreement_unique_name"
            )
        ]
        indexes = [
            models.Index(fields=["cluster", "verdict"], name="pod_agreement_verdict_idx"),
            models.Index(fields=["cluster", "node_name"], name="pod_agreement_node_idx"),
        ]

    def __str__(self) -> str:
        return f"{self.namespace}/{self.name}: {self.verdict}"

    def as_json(self) -> dict[str, Any]:
        return dict(self.body)


class AgreementSample(models.Model):
    """The cluster's agreement rates after one audit refresh (`rates`: the CLI's and the
    API's `rates` object), kept to draw the rate over time."""

    cluster = models.ForeignKey(Cluster, on_delete=models.CASCADE, related_name="agreement_samples")
    taken_at = models.DateTimeField()
    rates = models.JSONField(default=dict)

    class Meta:
        ordering = ["cluster", "taken_at"]
        indexes = [models.Index(fields=["cluster", "taken_at"], name="agreement_sample_idx")]

    def __str__(self) -> str:
        return f"{self.cluster_id} at {self.taken_at:%Y-%m-%d %H:%M}"


class PredictionStatus(models.TextChoices):
    WAITING = "waiting", "waiting for the pod"
    HELD = "held", "held"
    MISSED = "missed", "missed"
    CHANGED = "changed", "cluster changed meanwhile"
    EXPIRED = "expired", "no pod came"


class TrackedPrediction(models.Model):
    """A what-if answer asked with `track: true`, followed up (issue 32): where the
    engine said the pod would go, and where a pod of the same owner (or name, or
    generateName) really landed within the window (`services.audit.predictions`)."""

    cluster = models.ForeignKey(Cluster, on_delete=models.CASCADE, related_name="predictions")
    created_at = models.DateTimeField()
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )
    source = models.CharField(max_length=16, help_text="api or dashboard")
    # what a landed pod is matched by: its controller owner, else its name or generateName
    namespace = models.CharField(max_length=253)
    name = models.CharField(max_length=253, blank=True)
    generate_name = models.CharField(max_length=253, blank=True)
    owner_kind = models.CharField(max_length=63, blank=True)
    owner_name = models.CharField(max_length=253, blank=True)
    replicas = models.PositiveIntegerField(default=1)
    scheduler = models.CharField(max_length=32, help_text="the question's scheduler option")
    scheduler_name = models.CharField(max_length=253, blank=True)
    predicted = models.JSONField(
        default=dict,
        help_text="by system: [{replica, node, numa_zones, cpuset}], the answer's placements",
    )
    data_age_seconds = models.FloatField(null=True, blank=True)
    fingerprint = models.CharField(
        max_length=64, help_text="the cluster's nodes and bound pods when predicted"
    )
    expires_at = models.DateTimeField()
    status = models.CharField(
        max_length=16, choices=PredictionStatus.choices, default=PredictionStatus.WAITING
    )
    landed = models.JSONField(default=list, help_text="the matched pods and how each compares")
    resolved_at = models.DateTimeField(null=True, blank=True)
    why = models.TextField(blank=True)

    class Meta:
        ordering = ["cluster", "-created_at"]
        indexes = [
            models.Index(fields=["cluster", "status"], name="prediction_status_idx"),
            models.Index(fields=["cluster", "created_at"], name="prediction_created_idx"),
        ]

    def __str__(self) -> str:
        return f"prediction {self.pk} for {self.namespace}/{self.matched_by}: {self.status}"

    @property
    def matched_by(self) -> str:
        if self.owner_kind:
            return f"{self.owner_kind}/{self.owner_name}"
        return self.name or f"{self.generate_name}*"
