"""The agreement audit's results (issue 32): each running pod's verdict, kept per
cluster, and the cluster's rates over time (`topology.services.audit`)."""

from __future__ import annotations

from typing import Any

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
