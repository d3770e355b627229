"""What-if questions as the API receives them: a Pod manifest or the compact form.

The engine work is `topology.services.whatif`; this module turns the API's input
into its arguments (the compact form becomes a Pod manifest with the annotations
the schedulers read), decides what runs in the background, and answers.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import asdict, dataclass
from typing import Any

from django.conf import settings

from scheduler_api.engine.snapshot import (
    ANN_CRANE_AWARENESS,
    ANN_CRANE_CPU_POLICY,
    ANN_KOORD_RESOURCE_SPEC,
    LABEL_KOORD_QOS,
)
from topology.models import Cluster
from topology.services.whatif import (
    compare_schedulers,
    run_whatif,
    validated_pod,
)

COMPARE_ALL = "all"
DEFAULT_POD_NAME = "whatif-pod"


@dataclass(frozen=True)
class WhatIfQuestion:
    pod: dict[str, Any]  # a Pod manifest
    replicas: int = 1
    scheduler: str = "auto"  # one of topology.services.whatif.SCHEDULERS, or COMPARE_ALL
    scoring: str | None = None
    weights: dict[str, int] | None = None

    @property
    def compares_schedulers(self) -> bool:
        return self.scheduler == COMPARE_ALL

    def as_json(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> WhatIfQuestion:
        return cls(**data)


def whatif_question(data: Mapping[str, Any]) -> WhatIfQuestion:
    """From the request serializer's validated data (either `pod` or the compact form)."""
    pod = data.get("pod")
    return WhatIfQuestion(
        pod=dict(pod) if pod is not None else compact_pod_manifest(data),
        replicas=data.get("replicas", 1),
        scheduler=data.get("scheduler", "auto"),
        scoring=data.get("scoring") or None,
        weights=dict(data["weights"]) if data.get("weights") else None,
    )


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
        "annotations": {**(data.get("annotations") or {}), **_scheduler_annotations(data)},
    }
    return {"apiVersion": "v1", "kind": "Pod", "metadata": metadata, "spec": spec}


def _container(container: Mapping[str, Any]) -> dict[str, Any]:
    resources = {
        key: {name: str(amount) for name, amount in container[key].items()}
        for key in ("requests", "limits")
        if container.get(key)
    }
    return {"name": container["name"], "resources": resources}


def _scheduler_annotations(data: Mapping[str, Any]) -> dict[str, str]:
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


def whatif_check(question: WhatIfQuestion) -> None:
    """Refuse a malformed question before anything runs (WhatIfInputError, per field)."""
    validated_pod(
        question.pod,
        replicas=question.replicas,
        scheduler="auto" if question.compares_schedulers else question.scheduler,
        scoring=question.scoring,
        weights=question.weights,
    )


def whatif_runs_in_background(question: WhatIfQuestion) -> bool:
    return question.compares_schedulers or question.replicas > settings.API_WHATIF_SYNC_MAX_REPLICAS


def whatif_answer(*, cluster: Cluster, question: WhatIfQuestion) -> dict[str, Any]:
    """The engine's answer; a scheduler comparison maps each scheduler to its answer."""
    if question.compares_schedulers:
        return compare_schedulers(
            cluster=cluster,
            pod=question.pod,
            replicas=question.replicas,
            scoring=question.scoring,
            weights=question.weights,
        )
    return run_whatif(
        cluster=cluster,
        pod=question.pod,
        replicas=question.replicas,
        scheduler=question.scheduler,
        scoring=question.scoring,
        weights=question.weights,
    )
