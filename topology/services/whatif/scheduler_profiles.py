"""A cluster's scheduler profiles: those of every KubeSchedulerConfiguration document it
stores (uploaded in admin or synced), read by `topology.parsers.scheduler_config`."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from scheduler_api.engine import SchedulerProfile
from topology.models import Cluster, SchedulerConfiguration
from topology.parsers.scheduler_config import profiles_from_text, unique_profiles


def cluster_profiles(cluster: Cluster) -> tuple[SchedulerProfile, ...]:
    """The profiles of every stored document of `cluster` (each was checked when saved)."""
    profiles: list[SchedulerProfile] = []
    for config in SchedulerConfiguration.objects.filter(cluster=cluster).order_by("name"):
        profiles += profiles_from_text(config.document, source=f"scheduler config {config.name}")
    return unique_profiles(profiles)


def profiles_json(profiles: Iterable[SchedulerProfile]) -> list[dict[str, Any]]:
    """Profiles as JSON: what a what-if question is keyed by and an answer shows."""
    return [
        {
            "scheduler_name": p.scheduler_name,
            "system": p.system.value,
            "arguments": p.arguments(),
            "source": p.source,
        }
        for p in profiles
    ]
