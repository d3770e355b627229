"""Under /api/v1/ every answer is JSON in the one error shape (issue 28: an unknown POST
got Django's HTML CSRF page, a body over 2.5 MB an HTML 400)."""

from __future__ import annotations

import pytest
from django.test import Client

pytestmark = pytest.mark.django_db


def test_an_unknown_post_is_a_json_404_not_the_csrf_page(client_for) -> None:
    browser = Client(enforce_csrf_checks=True)  # a session client, as a browser would be
    response = browser.post("/api/v1/no/such/route", {"a": 1})
    assert response.status_code == 404
    assert response["Content-Type"] == "application/json"
    assert response.json()["detail"] == "Not found."


def test_a_body_over_the_limit_is_a_json_413(client_for, trio, settings) -> None:
    settings.DATA_UPLOAD_MAX_MEMORY_SIZE = 10_000
    operator = client_for("operator")
    body = '{"pod": {"metadata": {"name": "' + "x" * 20_000 + '"}}}'
    response = operator.post("/api/v1/clusters/trio/whatif", body, content_type="application/json")
    assert response.status_code == 413
    assert response["Content-Type"] == "application/json"
    assert "larger than the API accepts (10000 bytes)" in response.json()["detail"]
