"""One what-if question, checked once where it enters (issue 29, item 8)."""

from __future__ import annotations

from typing import Any

import pytest
from rest_framework.test import APIClient

from topology.models import Cluster
from topology.services.whatif import question as question_module
from topology.services.whatif.question import COMPARE_ALL, WhatIfInputError, WhatIfQuestion

RESOURCES = {"cpu": "2", "memory": "1Gi"}
POD = {
    "kind": "Pod",
    "metadata": {"name": "db", "namespace": "prod"},
    "spec": {"containers": [{"name": "db", "resources": {"requests": RESOURCES}}]},
}


def test_every_field_at_fault_is_named_together() -> None:
    with pytest.raises(WhatIfInputError) as caught:
        WhatIfQuestion.from_inputs(
            {"kind": "Service"}, replicas=-1, scheduler="yarn", scoring="best", weights={"cpu": 0}
        )
    assert set(caught.value.field_errors) == {"pod", "replicas", "scheduler", "scoring", "weights"}


def test_the_parsed_pod_travels_with_the_question() -> None:
    question = WhatIfQuestion.from_inputs(POD, replicas=3, scoring="", weights={})
    assert question.spec.name == "db" and question.spec.namespace == "prod"
    assert question.spec.containers[0].requests["cpu"] == 2000
    assert question.scoring is None and question.weights is None  # empty reads as unset
    assert question.pod_scheduler_name == "default-scheduler"


def test_a_stored_question_comes_back_the_same_and_checked_again() -> None:
    question = WhatIfQuestion.from_inputs(POD, replicas=2, scheduler=COMPARE_ALL, capacity=False)
    stored = question.as_json()
    assert "spec" not in stored
    assert WhatIfQuestion.from_json(stored) == question
    with pytest.raises(WhatIfInputError):
        WhatIfQuestion.from_json({**stored, "replicas": "many"})


def test_judging_under_another_scheduler_does_not_parse_again(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    question = WhatIfQuestion.from_inputs(POD)
    monkeypatch.setattr(question_module, "parse_pod", _refused)
    crane = question.under("crane")
    assert crane.scheduler == "crane" and crane.spec is question.spec
    with pytest.raises(ValueError, match="not one of"):
        question.under("yarn")


@pytest.mark.django_db
def test_the_api_parses_the_pod_once_per_request(
    trio: Cluster, user_for: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    parsed: list[int] = []
    real = question_module.parse_pod
    monkeypatch.setattr(question_module, "parse_pod", lambda obj: parsed.append(1) or real(obj))
    client = APIClient()
    client.force_authenticate(user_for("operator"))
    response = client.post("/api/v1/clusters/trio/whatif", {"pod": POD}, format="json")
    assert response.status_code == 200, response.content
    assert parsed == [1]


def _refused(obj: Any) -> None:
    raise AssertionError("the pod was parsed again")
