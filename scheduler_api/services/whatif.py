"""What-if questions as the API receives them: a Pod manifest or the compact form.

The question and its checks are `topology.services.whatif.question`, the engine work
`topology.services.whatif.service`; this module turns the API's validated body into a
question (the compact form becomes a Pod manifest with the annotations the schedulers
read), decides what runs in the background, and answers.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from django.conf import settings

from topology.models import Cluster
from topology.services.audit.predictions import record_prediction, tracked_json
from topology.services.whatif.manifest import compact_pod_manifest
from topology.services.whatif.question import COMPARE_ALL, WhatIfQuestion
from topology.services.whatif.service import ask

__all__ = [
    "COMPARE_ALL",
    "WhatIfQuestion",
    "body_pod",
    "whatif_answer",
    "whatif_question",
    "whatif_runs_in_background",
    "whatif_track",
]


def whatif_question(data: Mapping[str, Any]) -> WhatIfQuestion:
    """From the request serializer's validated data (either `pod` or the compact form);
    WhatIfInputError (per field) when the pod or an option cannot be run."""
    return WhatIfQuestion.from_inputs(
        body_pod(data),
        replicas=data.get("replicas", 1),
        scheduler=data.get("scheduler", "auto"),
        scoring=data.get("scoring") or None,
        weights=dict(data["weights"]) if data.get("weights") else None,
        use_draft_policies=bool(data.get("use_draft_policies", False)),
        capacity=bool(data.get("capacity", True)),
        scheduler_name=data.get("scheduler_name") or None,
    )


def body_pod(data: Mapping[str, Any]) -> dict[str, Any]:
    """The body's Pod manifest: its `pod`, else the compact form's containers written as one."""
    pod = data.get("pod")
    return dict(pod) if pod is not None else compact_pod_manifest(data)


def whatif_runs_in_background(question: WhatIfQuestion) -> bool:
    return question.compares_schedulers or question.replicas > settings.API_WHATIF_SYNC_MAX_REPLICAS


def whatif_answer(
    *, cluster: Cluster, question: WhatIfQuestion, fragments: bool = False
) -> dict[str, Any]:
    """The engine's answer; a scheduler comparison maps each scheduler to its answer.

    `fragments`: parts of a remembered answer may come as orjson Fragments (the API's
    renderer writes them as they are; nothing else may be given them)."""
    return ask(cluster, question, fragments=fragments)


def whatif_track(
    *, cluster: Cluster, question: WhatIfQuestion, answer: dict[str, Any], user: Any, source: str
) -> dict[str, Any]:
    """Remember the answer's prediction for follow-up (`services.audit.predictions`); the
    answer with `tracked` naming it."""
    row = record_prediction(
        cluster=cluster, question=question, answer=answer, user=user, source=source
    )
    return {**answer, "tracked": tracked_json(row)}
