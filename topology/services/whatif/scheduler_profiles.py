"""A cluster's scheduler profiles: read from its KubeSchedulerConfiguration documents.

A document comes as YAML or JSON, either the KubeSchedulerConfiguration itself (what
kube-scheduler's --config reads) or the ConfigMap that carries it (as `kubectl get
configmap -o yaml` prints it): each data value holding a KubeSchedulerConfiguration
is read. Bad documents are refused with the field at fault, never half-read.
"""

from __future__ import annotations

from collections.abc import Iterable
from functools import lru_cache
from typing import Any

import yaml

from scheduler_api.engine import (
    ProfileError,
    SchedulerProfile,
    parse_scheduler_configuration,
)
from topology.models import Cluster, SchedulerConfiguration
from topology.parsers.yaml_documents import load_all

MAX_DOCUMENT_CHARS = 256 * 1024


def profiles_from_text(text: str, *, source: str) -> tuple[SchedulerProfile, ...]:
    """Every profile of the KubeSchedulerConfiguration(s) in `text`; ProfileError if bad.

    Remembered per text: every what-if reads its cluster's documents, which seldom change
    (an error is raised afresh each time)."""
    return _parsed(text, source)


@lru_cache(maxsize=64)
def _parsed(text: str, source: str) -> tuple[SchedulerProfile, ...]:
    if len(text) > MAX_DOCUMENT_CHARS:
        raise ProfileError(f"the document is larger than {MAX_DOCUMENT_CHARS // 1024} KiB")
    documents = _documents(text)
    profiles: list[SchedulerProfile] = []
    for index, document in enumerate(documents):
        where = source if len(documents) == 1 else f"{source} document {index + 1}"
        profiles += _profiles_of(document, where)
    if not profiles:
        raise ProfileError("no KubeSchedulerConfiguration found")
    return _unique(profiles)


def _documents(text: str) -> list[Any]:
    try:
        return [d for d in load_all(text) if d is not None]
    except yaml.YAMLError as error:
        mark = getattr(error, "problem_mark", None)
        where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark else ""
        problem = getattr(error, "problem", None) or "not valid YAML or JSON"
        raise ProfileError(f"{problem}{where}") from None


def _profiles_of(document: Any, source: str) -> list[SchedulerProfile]:
    if isinstance(document, dict) and document.get("kind") == "ConfigMap":
        found: list[SchedulerProfile] = []
        for key, value in sorted((document.get("data") or {}).items()):
            inner = _documents(value) if isinstance(value, str) else []
            for config in inner:
                if isinstance(config, dict) and config.get("kind") == "KubeSchedulerConfiguration":
                    found += parse_scheduler_configuration(config, source=f"{source} data.{key}")
        return found
    return list(parse_scheduler_configuration(document, source=source))


def _unique(profiles: Iterable[SchedulerProfile]) -> tuple[SchedulerProfile, ...]:
    seen: dict[str, SchedulerProfile] = {}
    for profile in profiles:
        if profile.scheduler_name in seen:
            raise ProfileError(
                f"schedulerName {profile.scheduler_name!r} is defined twice: in "
                f"{seen[profile.scheduler_name].source} and in {profile.source}"
            )
        seen[profile.scheduler_name] = profile
    return tuple(seen.values())


def cluster_profiles(cluster: Cluster) -> tuple[SchedulerProfile, ...]:
    """The profiles of every stored document of `cluster` (each was checked when saved)."""
    profiles: list[SchedulerProfile] = []
    for config in SchedulerConfiguration.objects.filter(cluster=cluster).order_by("name"):
        profiles += profiles_from_text(config.document, source=f"scheduler config {config.name}")
    return _unique(profiles)


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
