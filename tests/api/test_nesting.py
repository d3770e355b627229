"""A body nested thousands deep is a JSON 400, never a server error (issue 28)."""

from __future__ import annotations

import pytest


@pytest.mark.django_db
def test_the_api_answers_a_deep_body_with_a_json_400(client_for, trio) -> None:
    operator = client_for("operator")
    body = '{"pod": ' + '{"a": [' * 2_000 + '"x"' + "]}" * 2_000 + "}"
    response = operator.post("/api/v1/clusters/trio/whatif", body, content_type="application/json")
    assert response.status_code == 400
    assert "nested more than" in response.json()["detail"]


def test_a_pod_naming_thousands_of_resources_is_refused(client_for, trio) -> None:
    """Issue 28: 50,000 extended resources made a 106 MB answer."""
    requests = {f"example.com/r{i}": "1" for i in range(5_000)}
    body = {"containers": [{"name": "db", "requests": requests}]}
    response = client_for("operator").post("/api/v1/clusters/trio/whatif", body, format="json")
    assert response.status_code == 400
    assert "at most 64 resources" in str(response.json()["errors"])
    many = {"containers": [{"name": f"c{i}", "requests": {"cpu": "1"}} for i in range(100)]}
    response = client_for("operator").post("/api/v1/clusters/trio/whatif", many, format="json")
    assert response.status_code == 400
    assert "at most 64 containers" in str(response.json()["errors"])
    spread = {
        "containers": [
            {"name": f"c{i}", "requests": {f"example.com/r{i}-{j}": "1" for j in range(40)}}
            for i in range(40)
        ]
    }
    response = client_for("operator").post("/api/v1/clusters/trio/whatif", spread, format="json")
    assert response.status_code == 400  # 1,600 names in all: each verdict could list them
    assert "at most 64 different resources in all containers" in str(response.json()["errors"])
