"""A NUL character in a URL or a body is a clear 400, never a database error (issue 28:
`DataError` from PostgreSQL on 11 API routes and 4 dashboard URLs, and a 500 when a
background what-if with a NUL in a label key was saved)."""

from __future__ import annotations

import pytest
from django.test import Client

pytestmark = pytest.mark.django_db

API_PATHS = [
    "/api/v1/clusters/trio%00",
    "/api/v1/clusters/trio/nodes/worker%00",
    "/api/v1/clusters/trio/nodes/worker%00/topology",
    "/api/v1/clusters/trio/pods/default/web%00",
    "/api/v1/clusters/trio/policies/worker%00",
    "/api/v1/clusters/trio/reservations/r%00",
    "/api/v1/clusters/trio/nodes?name=a%00b",
    "/api/v1/clusters/trio/pods?namespace=%00",
]
PAGES = ["/c/trio%00/", "/c/trio/nodes/worker%00/", "/c/trio/?q=%00"]


@pytest.mark.parametrize("path", API_PATHS)
def test_a_nul_in_an_api_url_is_a_json_400(client_for, trio, path: str) -> None:
    response = client_for("admin").get(path)
    assert response.status_code == 400
    assert "NUL" in response.json()["detail"]


@pytest.mark.parametrize("path", PAGES)
def test_a_nul_in_a_page_url_is_a_400(trio, path: str, django_user_model) -> None:
    client = Client()
    client.force_login(django_user_model.objects.create_superuser("root", password=None))
    assert client.get(path).status_code == 400


def test_a_nul_in_a_what_if_body_is_a_field_error(client_for, trio) -> None:
    body = {
        "containers": [{"name": "db", "requests": {"cpu": "1"}}],
        "labels": {"team\u0000": "a"},
        "replicas": 50,
    }
    response = client_for("operator").post("/api/v1/clusters/trio/whatif", body, format="json")
    assert response.status_code == 400
    assert "NUL" in str(response.json())
