"""KubeSchedulerConfiguration documents → scheduler profiles, and a ConfigMap holding
one → SchedulerConfigRecord.

A document comes as YAML or JSON, either the KubeSchedulerConfiguration itself (what
kube-scheduler's --config reads) or the ConfigMap that carries it (as `kubectl get
configmap -o yaml` prints it): each data value holding a KubeSchedulerConfiguration is
read. Bad documents are refused with the field at fault, never half-read.

kube-scheduler, koord-scheduler and the scheduler-plugins' secondary scheduler all read
their `--config` from a file that their deployments mount from a ConfigMap (for example
`koordinator-system/koord-scheduler-config`, key `koord-scheduler-config`). Such a
ConfigMap is mirrored as the cluster's scheduler configuration: its profiles decide which
system judges a pod. The document is kept as the ConfigMap's own JSON, which
`profiles_from_text` reads, and it is checked when parsed, so a document that yields no
profile is refused with the field at fault and never replaces a good one.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import yaml

from scheduler_api.engine import ProfileError, SchedulerProfile, parse_scheduler_configuration
from topology.parsers.fields import Reader
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
    return unique_profiles(profiles)


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


def unique_profiles(profiles: Iterable[SchedulerProfile]) -> tuple[SchedulerProfile, ...]:
    seen: dict[str, SchedulerProfile] = {}
    for profile in profiles:
        if profile.scheduler_name in seen:
            raise ProfileError(
                f"schedulerName {profile.scheduler_name!r} is defined twice: in "
                f"{seen[profile.scheduler_name].source} and in {profile.source}"
            )
        seen[profile.scheduler_name] = profile
    return tuple(seen.values())


_KIND_LINE = re.compile(r'^\s*"?kind"?\s*:\s*"?KubeSchedulerConfiguration"?\s*,?\s*$', re.M)


@dataclass(frozen=True)
class SchedulerConfigRecord:
    namespace: str
    name: str
    uid: str
    resource_version: str
    document: str  # the ConfigMap's kind, metadata name/namespace and data, as JSON

    @property
    def reference(self) -> str:
        return f"{self.namespace}/{self.name}"


def holds_scheduler_configuration(obj: Any) -> bool:
    """A ConfigMap one of whose data values declares `kind: KubeSchedulerConfiguration`."""
    data = obj.get("data") if isinstance(obj, dict) else None
    if not isinstance(data, dict):
        return False
    return any(isinstance(value, str) and _KIND_LINE.search(value) for value in data.values())


def parse_scheduler_configmap(obj: Any) -> SchedulerConfigRecord:
    reader = Reader(obj, "ConfigMap")
    data = reader.string_map("data")
    namespace = reader.get("metadata.namespace", str)
    name = reader.get("metadata.name", str)
    kept = {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"namespace": namespace, "name": name},
        "data": data,
    }
    document = json.dumps(kept, sort_keys=True)
    try:
        profiles_from_text(document, source=f"ConfigMap {namespace}/{name}")
    except ProfileError as error:
        raise reader.error("data", str(error)) from None
    return SchedulerConfigRecord(
        namespace=namespace,
        name=name,
        uid=reader.get("metadata.uid", str, default=""),
        resource_version=reader.get("metadata.resourceVersion", str, default=""),
        document=document,
    )
