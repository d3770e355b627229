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
