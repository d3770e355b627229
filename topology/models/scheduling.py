"""Scheduler configuration per cluster: the KubeSchedulerConfiguration documents whose
profiles decide which system judges a pod (`scheduler_api.engine.profiles`)."""

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
    name = models.SlugField(
        max_length=100, help_text="a name for this document, e.g. the scheduler's deployment"
    )
    document = models.TextField(
        help_text="the KubeSchedulerConfiguration (YAML or JSON), as passed to --config"
    )
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["cluster", "name"]
        constraints = [
            models.UniqueConstraint(fields=["cluster", "name"], name="uniq_scheduler_config_name")
        ]

    def __str__(self) -> str:
        return f"{self.cluster.name}/{self.name}"
