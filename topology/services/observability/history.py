"""The figures over time, for users without Prometheus (issue 33).

Each figures run (`services.mirror.figures`, every `TOPOLENS_FIGURES_SECONDS`) adds one
`ClusterFigureSample` (the cluster's free exclusive CPUs, largest free block,
fragmentation and the largest exclusive pod some node admits per Topology Manager
policy) and, downsampled, each node's figures into its hour's `NodeFigureSample` (the
hour's last run wins). Housekeeping deletes both past `TOPOLENS_HISTORY_DAYS` (default
14). At 5,000 nodes that is 4,032 cluster rows and 1.7 million node rows at most.

`cluster_history` reads the cluster's series back at a coarser step (the last sample
of each step), as the API's `history` and the overview's trend chart show them.
"""

from __future__ import annotations

import math
import random
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from django.conf import settings
from django.utils import timezone

from scheduler_api.engine import TopologyManagerPolicy, cluster_fragmentation, fragmentation
from topology.models import Cluster, ClusterFigureSample, NodeFigures, NodeFigureSample

POLICIES = tuple(policy.value for policy in TopologyManagerPolicy)
SINGLE_NUMA = TopologyManagerPolicy.SINGLE_NUMA_NODE.value
MIN_STEP = timedelta(minutes=5)  # no finer than the figures job's default cadence
MAX_POINTS = 5_000  # a history answer's points at most: a coarser step is asked
CHART_POINTS = 1_000  # the overview's trend: enough for its width, drawn in time


def retention() -> timedelta:
    return timedelta(days=settings.TOPOLENS_HISTORY_DAYS)


def record_history(cluster: Cluster, rows: Sequence[NodeFigures], now: datetime) -> None:
    """Add one figures run (`rows`: every node's new figures) to the cluster's history."""
    ClusterFigureSample.objects.create(cluster=cluster, taken_at=now, **cluster_figures(rows))
    hour = now.replace(minute=0, second=0, microsecond=0)
    NodeFigureSample.objects.bulk_create(
        [
            NodeFigureSample(
                node_id=row.node_id,
                hour=hour,
                free_cpus_by_zone=row.free_cpus_by_zone,
                free_cpus_total=row.free_cpus_total,
                max_free_cpus_in_one_zone=row.max_free_cpus_in_one_zone,
                fragmentation=row.fragmentation,
            )  # fmt: skip
            for row in rows
        ],
        update_conflicts=True,
        unique_fields=["node", "hour"],
        update_fields=[
            "free_cpus_by_zone",
            "free_cpus_total",
            "max_free_cpus_in_one_zone",
            "fragmentation",
        ],  # fmt: skip
        batch_size=2000,
    )


def cluster_figures(rows: Sequence[NodeFigures]) -> dict[str, Any]:
    """The cluster's figures from its nodes' (the fields of `ClusterFigureSample`)."""
    largest = {policy: 0 for policy in POLICIES}
    for row in rows:
        for policy, cpus in row.largest_exclusive_pod.items():
            largest[policy] = max(largest.get(policy, 0), cpus)
    return {
        "nodes": len(rows),
        "zones": sum(len(row.free_cpus_by_zone) for row in rows),
        "free_cpus_total": sum(row.free_cpus_total for row in rows),
        "largest_free_block": max((row.max_free_cpus_in_one_zone for row in rows), default=0),
        "fragmentation": cluster_fragmentation(
            (row.max_free_cpus_in_one_zone, row.free_cpus_total) for row in rows
        ),
        "largest_pod_by_policy": largest,
    }


def prune_history(now: datetime | None = None) -> int:
    """Delete the samples older than the retention; returns how many went."""
    cutoff = (now or timezone.now()) - retention()
    clusters, _ = ClusterFigureSample.objects.filter(taken_at__lt=cutoff).delete()
    nodes, _ = NodeFigureSample.objects.filter(hour__lt=cutoff).delete()
    return clusters + nodes


# --- reading it back ------------------------------------------------------------------------


class HistoryRangeError(ValueError):
    """A history range that cannot be answered; `field_errors` says which parameter."""

    def __init__(self, field_errors: dict[str, list[str]]) -> None:
        self.field_errors = field_errors
        super().__init__("; ".join(f"{k}: {' '.join(v)}" for k, v in field_errors.items()))


@dataclass(frozen=True)
class HistoryRange:
    start: datetime
    end: datetime
    step: timedelta

    @classmethod
    def for_chart(cls) -> HistoryRange:
        """The whole retention up to now, at most CHART_POINTS points."""
        return cls.of(None, None, max(MIN_STEP, retention() / CHART_POINTS))

    @classmethod
    def of(
        cls, start: datetime | None, end: datetime | None, step: timedelta | None
    ) -> HistoryRange:
        """Defaults: the whole retention up to now, at the finest step that keeps the
        answer within MAX_POINTS. HistoryRangeError for a range or step out of bounds."""
        end = end or timezone.now()
        start = start or end - retention()
        errors: dict[str, list[str]] = {}
        if start >= end:
            errors["from"] = ["must be before `to`"]
        span = end - start
        step = step or max(MIN_STEP, span / MAX_POINTS)
        if step < MIN_STEP:
            errors["step"] = [f"at least {int(MIN_STEP.total_seconds())} seconds"]
        elif span / step > MAX_POINTS:
            errors["step"] = [f"too fine for this range: at most {MAX_POINTS} points"]
        if errors:
            raise HistoryRangeError(errors)
        return cls(start, end, step)


def cluster_history(cluster: Cluster, when: HistoryRange) -> list[dict[str, Any]]:
    """The cluster's samples in the range, the last of each step, oldest first."""
    samples = (
        ClusterFigureSample.objects.filter(
            cluster=cluster, taken_at__gte=when.start, taken_at__lte=when.end
        )
        .order_by("taken_at")
        .values(
            "taken_at",
            "nodes",
            "zones",
            "free_cpus_total",
            "largest_free_block",
            "fragmentation",
            "largest_pod_by_policy",
        )  # fmt: skip
    )
    by_step: dict[int, dict[str, Any]] = {}
    for sample in samples.iterator(chunk_size=2000):
        by_step[int((sample["taken_at"] - when.start) / when.step)] = sample
    return [by_step[key] for key in sorted(by_step)]


def node_history(node_id: int, since: datetime) -> list[dict[str, Any]]:
    """A node's hourly samples since `since`, oldest first (the node page's sparklines)."""
    return list(
        NodeFigureSample.objects.filter(node_id=node_id, hour__gte=since)
        .order_by("hour")
        .values("hour", "free_cpus_by_zone", "free_cpus_total", "fragmentation")
    )


# --- the demo's past --------------------------------------------------------------------------


def seed_demo_history(cluster: Cluster, now: datetime | None = None, seed: int = 0) -> int:
    """A plausible past for the demo cluster, so a new user sees a trend at once: the
    current figures scaled by a daily load cycle (busiest at 14:00 UTC) with a slow
    drift and a little deterministic noise, every 30 minutes for the retention, and each
    node's zones hourly. Synthetic: only the demo calls it. Returns the samples written."""
    now = now or timezone.now()
    rows = list(NodeFigures.objects.filter(node__cluster=cluster))
    if not rows:
        return 0
    rng = random.Random(seed)
    start = (now - retention()).replace(minute=0, second=0, microsecond=0)
    steps = int((now - start) / timedelta(minutes=30))
    samples, node_rows = [], []
    times = [start + timedelta(minutes=30 * index) for index in range(steps)]
    shares = [_free_share(when, index / steps, rng) for index, when in enumerate(times)]
    today = _free_share(now, 1.0, rng)  # the current figures are this share: the past ends there
    for when, share in zip(times, shares, strict=True):
        scaled = [_scaled(row, share / today) for row in rows]
        figures = cluster_figures(scaled)
        samples.append(ClusterFigureSample(cluster=cluster, taken_at=when, **figures))
        if when.minute == 0:
            node_rows.extend(_node_sample(row, when) for row in scaled)
    ClusterFigureSample.objects.bulk_create(samples, batch_size=2000)
    NodeFigureSample.objects.bulk_create(node_rows, batch_size=2000, ignore_conflicts=True)
    return len(samples) + len(node_rows)


def _free_share(when: datetime, drift: float, rng: random.Random) -> float:
    """The share of CPUs free at `when`: a daily cycle (busiest at 14:00 UTC), load
    growing slowly over the period (`drift` 0..1), a little noise."""
    hours = when.hour + when.minute / 60
    load = 0.5 + 0.35 * math.sin((hours - 8) / 24 * 2 * math.pi) + 0.1 * drift
    return min(max(1 - 0.6 * load + rng.uniform(-0.03, 0.03), 0.05), 1.0)


def _scaled(row: NodeFigures, factor: float) -> NodeFigures:
    """`row` with its free CPUs times `factor` (each zone at most its capacity; its
    largest pods scaled alike, at most all its free CPUs)."""
    capacity = {numa: zone.get("capacity", 0) for numa, zone in row.zone_cpus.items()}
    free = {
        numa: min(int(cpus * factor), capacity.get(numa, cpus))
        for numa, cpus in row.free_cpus_by_zone.items()
    }
    total = sum(free.values())
    largest_zone = max(free.values(), default=0)
    largest = {
        policy: largest_zone if policy == SINGLE_NUMA else min(int(cpus * factor), total)
        for policy, cpus in row.largest_exclusive_pod.items()
    }
    return NodeFigures(
        node_id=row.node_id,
        free_cpus_by_zone=free,
        free_cpus_total=total,
        max_free_cpus_in_one_zone=largest_zone,
        largest_exclusive_pod=largest,
        fragmentation=fragmentation({int(numa): cpus for numa, cpus in free.items()}),
    )


def _node_sample(row: NodeFigures, hour: datetime) -> NodeFigureSample:
    return NodeFigureSample(
        node_id=row.node_id, hour=hour.replace(minute=0, second=0, microsecond=0),
        free_cpus_by_zone=row.free_cpus_by_zone, free_cpus_total=row.free_cpus_total,
        max_free_cpus_in_one_zone=row.max_free_cpus_in_one_zone,
        fragmentation=row.fragmentation,
    )  # fmt: skip
