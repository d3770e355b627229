"""Scheduler configuration per cluster: the KubeSchedulerConfiguration documents whose
profiles decide which system judges a pod (`scheduler_api.engine.whatif.profiles`)."""

from __future__ import annotations

from django.db import models

from topology.models.mirror import Cluster


class SchedulerConfiguration(models.Model):
    """One KubeSchedulerConfiguration document of a cluster's schedulers, as YAML.

    A cluster may run several schedulers (kube-scheduler with scheduler-plugins,
    crane-scheduler, koord-scheduler), each with a document of its own; their profiles
    together map every `schedulerName` to the system that judges its pods.
    """

    cluster = models.ForeignKey(
        Cluster, on_delete=models.CASCADE, related_name="scheduler_configurations"
    )
    name = models.CharField(
        max_length=253,
        help_text="a name for this document, e.g. the scheduler's deployment (a synced "
        "document: its ConfigMap's name)",
    )
    document = models.TextField(
        help_text="the KubeSchedulerConfiguration (YAML or JSON), as passed to --config"
    )
    updated_at = models.DateTimeField(auto_now=True)
    synced_from = models.CharField(
        max_length=507,
        blank=True,
        help_text="namespace/name of the cluster's ConfigMap this document mirrors "
        "(kept by the sync, read-only here); empty: uploaded in admin",
    )
    uid = models.CharField(max_length=64, blank=True)
    resource_version = models.CharField(max_length=64, blank=True)
    content_hash = models.CharField(max_length=64, blank=True)

    class Meta:
        ordering = ["cluster", "name"]
        constraints = [
            models.UniqueConstraint(
                fields=["cluster", "name", "synced_from"], name="uniq_scheduler_config_name"
            )
        ]

    def __str__(self) -> str:
        if self.synced_from:
            return f"{self.cluster.name}: ConfigMap {self.synced_from}"
        return f"{self.cluster.name}/{self.name}"
