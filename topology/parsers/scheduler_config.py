"""A ConfigMap holding a KubeSchedulerConfiguration → SchedulerConfigRecord.

kube-scheduler, koord-scheduler and the scheduler-plugins' secondary scheduler all read
their `--config` from a file that their deployments mount from a ConfigMap (for example
`koordinator-system/koord-scheduler-config`, key `koord-scheduler-config`). Such a
ConfigMap is mirrored as the cluster's scheduler configuration: its profiles decide which
system judges a pod. The document is kept as the ConfigMap's own JSON, which
`topology.services.whatif.scheduler_profiles` reads, and it is checked here, so a document that
yields no profile is refused with the field at fault and never replaces a good one.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

from topology.parsers.fields import Reader

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
    from topology.services.whatif.scheduler_profiles import ProfileError, profiles_from_text

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
