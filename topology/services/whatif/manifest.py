"""The compact what-if form as the Pod manifest a user would have written.

One mapping for every front end: the REST API's compact body and the dashboard's
form both describe containers with `requests`/`limits` plus the scheduler knobs
(`crane_cpu_policy`, `crane_topology_awareness`, `koordinator_qos_class`,
`koordinator_cpu_bind_policy` + `koordinator_cpu_bind_required`,
`koordinator_cpu_exclusive_policy`); this turns them into the labels and
annotations crane-scheduler and koord-scheduler read.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from scheduler_api.engine import (
    ANN_CRANE_AWARENESS,
    ANN_CRANE_CPU_POLICY,
    ANN_KOORD_RESOURCE_SPEC,
    LABEL_KOORD_QOS,
)
from topology.services.whatif.question import DEFAULT_POD_NAME


def compact_pod_manifest(data: Mapping[str, Any]) -> dict[str, Any]:
    """The compact form as the Pod manifest a user would have written."""
    labels = dict(data.get("labels") or {})
    if data.get("koordinator_qos_class"):
        labels[LABEL_KOORD_QOS] = data["koordinator_qos_class"]
    spec: dict[str, Any] = {"containers": [_container(c) for c in data["containers"]]}
    if data.get("init_containers"):
        spec["initContainers"] = [_container(c) for c in data["init_containers"]]
    if data.get("priority") is not None:
        spec["priority"] = data["priority"]
    metadata = {
        "name": data.get("name") or DEFAULT_POD_NAME,
        "namespace": data.get("namespace") or "default",
        "labels": labels,
        "annotations": {**(data.get("annotations") or {}), **scheduler_annotations(data)},
    }
    return {"apiVersion": "v1", "kind": "Pod", "metadata": metadata, "spec": spec}


def _container(container: Mapping[str, Any]) -> dict[str, Any]:
    resources = {
        key: {name: str(amount) for name, amount in container[key].items()}
        for key in ("requests", "limits")
        if container.get(key)
    }
    manifest = {"name": container["name"], "resources": resources}
    if container.get("restart_policy"):
        manifest["restartPolicy"] = container["restart_policy"]
    return manifest


def scheduler_annotations(data: Mapping[str, Any]) -> dict[str, str]:
    """The pod annotations Crane and Koordinator read, from the compact form's knobs."""
    annotations: dict[str, str] = {}
    if data.get("crane_cpu_policy"):
        annotations[ANN_CRANE_CPU_POLICY] = data["crane_cpu_policy"]
    if data.get("crane_topology_awareness") is not None:
        annotations[ANN_CRANE_AWARENESS] = "true" if data["crane_topology_awareness"] else "false"
    spec: dict[str, str] = {}
    if data.get("koordinator_cpu_bind_policy"):
        hardness = "required" if data.get("koordinator_cpu_bind_required") else "preferred"
        spec[f"{hardness}CPUBindPolicy"] = data["koordinator_cpu_bind_policy"]
    if data.get("koordinator_cpu_exclusive_policy"):
        spec["preferredCPUExclusivePolicy"] = data["koordinator_cpu_exclusive_policy"]
    if spec:
        annotations[ANN_KOORD_RESOURCE_SPEC] = json.dumps(spec, separators=(",", ":"))
    return annotations
