"""What-if questions as the API receives them: a Pod manifest or the compact form.

The engine work is `topology.services.whatif.service`; this module turns the API's input
into its arguments (the compact form becomes a Pod manifest with the annotations
the schedulers read), decides what runs in the background, and answers.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass
from typing import Any

from django.conf import settings

from topology.models import Cluster
from topology.services.whatif.manifest import compact_pod_manifest
from topology.services.whatif.service import (
    compare_schedulers,
    run_whatif,
    validated_pod,
)

COMPARE_ALL = "all"


@dataclass(frozen=True)
class WhatIfQuestion:
    pod: dict[str, Any]  # a Pod manifest
    replicas: int = 1
    scheduler: str = "auto"  # one of topology.services.whatif.service.SCHEDULERS, or COMPARE_ALL
    scoring: str | None = None
    weights: dict[str, int] | None = None
    use_draft_policies: bool = False  # judge nodes as if their saved NodePolicies were applied
    capacity: bool = True  # False: do not count the copies each node could still take
    scheduler_name: str | None = None  # the pod's schedulerName, overriding the manifest's

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
        use_draft_policies=bool(data.get("use_draft_policies", False)),
        capacity=bool(data.get("capacity", True)),
        scheduler_name=data.get("scheduler_name") or None,
    )


def whatif_check(question: WhatIfQuestion) -> None:
    """Refuse a malformed question before anything runs (WhatIfInputError, per field)."""
    validated_pod(
        question.pod,
        replicas=question.replicas,
        scheduler="auto" if question.compares_schedulers else question.scheduler,
        scoring=question.scoring,
        weights=question.weights,
        capacity=question.capacity,
        scheduler_name=question.scheduler_name,
    )


def whatif_runs_in_background(question: WhatIfQuestion) -> bool:
    return question.compares_schedulers or question.replicas > settings.API_WHATIF_SYNC_MAX_REPLICAS


def whatif_answer(
    *, cluster: Cluster, question: WhatIfQuestion, fragments: bool = False
) -> dict[str, Any]:
    """The engine's answer; a scheduler comparison maps each scheduler to its answer.

    `fragments`: parts of a remembered answer may come as orjson Fragments (the API's
    renderer writes them as they are; nothing else may be given them)."""
    if question.compares_schedulers:
        return compare_schedulers(
            cluster=cluster,
            pod=question.pod,
            replicas=question.replicas,
            scoring=question.scoring,
            weights=question.weights,
            capacity=question.capacity,
            use_draft_policies=question.use_draft_policies,
            scheduler_name=question.scheduler_name,
        )
    return run_whatif(
        cluster=cluster,
        pod=question.pod,
        replicas=question.replicas,
        scheduler=question.scheduler,
        scoring=question.scoring,
        weights=question.weights,
        capacity=question.capacity,
        use_draft_policies=question.use_draft_policies,
        fragments=fragments,
        scheduler_name=question.scheduler_name,
    )
