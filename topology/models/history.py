"""Figures over time (issue 33): kept by the figures job for users without Prometheus,
downsampled, pruned by housekeeping after `TOPOLENS_HISTORY_DAYS`
(`topology.services.observability.history`)."""

from __future__ import annotations

from django.db import models

from topology.models.mirror import Cluster, Node


class ClusterFigureSample(models.Model):
    """The cluster's figures after one figures run (every `TOPOLENS_FIGURES_SECONDS`)."""

    cluster = models.ForeignKey(Cluster, on_delete=models.CASCADE, related_name="figure_samples")
    taken_at = models.DateTimeField()
    nodes = models.PositiveIntegerField(default=0)
    zones = models.PositiveIntegerField(default=0)
    free_cpus_total = models.PositiveIntegerField(default=0, help_text="free exclusive CPUs")
    largest_free_block = models.PositiveIntegerField(
        default=0, help_text="the most free exclusive CPUs in one NUMA zone of any node"
    )
    fragmentation = models.FloatField(default=0.0, help_text="engine.cluster_fragmentation")
    largest_pod_by_policy = models.JSONField(
        default=dict,
        help_text="Topology Manager policy -> the largest exclusive pod (CPUs) some node "
        "admits under it",
    )

    class Meta:
        ordering = ["cluster", "taken_at"]
        indexes = [models.Index(fields=["cluster", "taken_at"], name="cluster_figure_sample_idx")]

    def __str__(self) -> str:
        return f"{self.cluster_id} at {self.taken_at:%Y-%m-%d %H:%M}"


class NodeFigureSample(models.Model):
    """A node's figures, one row per hour (the hour's last figures run)."""

    node = models.ForeignKey(Node, on_delete=models.CASCADE, related_name="figure_samples")
    hour = models.DateTimeField(help_text="the hour's start")
    free_cpus_by_zone = models.JSONField(default=dict, help_text="NUMA id -> free exclusive CPUs")
    free_cpus_total = models.PositiveIntegerField(default=0)
    max_free_cpus_in_one_zone = models.PositiveIntegerField(default=0)
    fragmentation = models.FloatField(default=0.0)

    class Meta:
        ordering = ["node", "hour"]
        constraints = [
            models.UniqueConstraint(fields=["node", "hour"], name="node_figure_sample_hour")
        ]

    def __str__(self) -> str:
        return f"{self.node_id} at {self.hour:%Y-%m-%d %H:00}"
