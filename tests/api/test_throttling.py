"""What-if and export are throttled per user; other reads are not."""

from __future__ import annotations

from typing import Any

import pytest
from rest_framework.test import APIClient

from topology.models import Cluster

pytestmark = pytest.mark.django_db
POD = {"kind": "Pod", "metadata": {"name": "x"}, "spec": {"containers": [{"name": "a"}]}}


@pytest.fixture
def tight_rates(settings: Any) -> None:
    settings.API_THROTTLE_RATES = {"whatif": "2/minute", "export": "1/hour"}


def test_what_if_is_throttled_per_user(tight_rates: None, client_for: Any, trio: Cluster) -> None:
    operator = client_for("operator")
    statuses = [
        operator.post("/api/v1/clusters/trio/whatif", {"pod": POD}, format="json").status_code
        for _ in range(3)
    ]
    assert statuses == [200, 200, 429]
    throttled = operator.post("/api/v1/clusters/trio/whatif", {"pod": POD}, format="json")
    assert int(throttled["Retry-After"]) > 0
    assert set(throttled.json()) == {"detail", "errors"}
    other = client_for("admin")
    assert (
        other.post("/api/v1/clusters/trio/whatif", {"pod": POD}, format="json").status_code == 200
    )


def test_export_is_throttled_per_user(tight_rates: None, client_for: Any, cluster: Cluster) -> None:
    viewer = client_for("viewer")
    assert viewer.get("/api/v1/clusters/prod/export").status_code == 200
    assert viewer.get("/api/v1/clusters/prod/export").status_code == 429
    assert client_for("operator").get("/api/v1/clusters/prod/export").status_code == 200


def test_reads_are_not_throttled(tight_rates: None, viewer: APIClient, cluster: Cluster) -> None:
    assert {viewer.get("/api/v1/clusters").status_code for _ in range(5)} == {200}


def test_a_refused_request_uses_no_quota(tight_rates: None, client_for: Any, trio: Cluster) -> None:
    viewer = client_for("viewer")
    for _ in range(3):
        assert viewer.post("/api/v1/clusters/trio/whatif", {"pod": POD}, "json").status_code == 403
