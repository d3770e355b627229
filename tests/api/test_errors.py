"""Every error has one shape: {"detail": ..., "errors": {field: [messages]}}."""

from __future__ import annotations

from typing import Any

import pytest
from rest_framework import serializers
from rest_framework.exceptions import ValidationError
from rest_framework.test import APIClient

from scheduler_api.api.exceptions import flatten_errors
from topology.models import Cluster

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize(
    ("persona", "method", "path", "status"),
    [
        ("anonymous", "get", "/api/v1/clusters", 401),
        ("outsider", "get", "/api/v1/clusters", 403),
        ("viewer", "get", "/api/v1/clusters/nope", 404),
        ("viewer", "delete", "/api/v1/clusters/prod", 403),
        ("admin", "put", "/api/v1/clusters/prod", 405),
        ("viewer", "get", "/api/v1/clusters/prod/nodes?flavour=windows", 400),
    ],
)
def test_errors_have_one_shape(
    client_for: Any, cluster: Cluster, persona: str, method: str, path: str, status: int
) -> None:
    response = getattr(client_for(persona), method)(path)
    assert response.status_code == status
    body = response.json()
    assert set(body) == {"detail", "errors"} and isinstance(body["detail"], str)
    assert bool(body["errors"]) == (status == 400)


def test_a_malformed_json_body_is_a_400(admin: APIClient) -> None:
    response = admin.generic("POST", "/api/v1/clusters", "{not json", "application/json")
    assert response.status_code == 400
    assert "JSON parse error" in response.json()["detail"]


def test_nested_errors_flatten_to_dotted_paths() -> None:
    class Container(serializers.Serializer):
        name = serializers.CharField()
        requests = serializers.DictField(child=serializers.IntegerField())

    class Body(serializers.Serializer):
        containers = Container(many=True, allow_empty=False)

    body = Body(data={"containers": [{"name": "ok", "requests": {}}, {"requests": {"cpu": "x"}}]})
    assert not body.is_valid()
    assert flatten_errors(ValidationError(body.errors).detail) == {
        "containers.1.name": ["This field is required."],
        "containers.1.requests.cpu": ["A valid integer is required."],
    }
    empty = Body(data={"containers": []})
    assert not empty.is_valid()
    assert flatten_errors(ValidationError(empty.errors).detail) == {
        "containers": ["This list may not be empty."]
    }
    assert flatten_errors(ValidationError(["bad"]).detail) == {"non_field_errors": ["bad"]}


@pytest.mark.parametrize(
    "path",
    [
        "/api/v1/tasks/not-a-uuid",
        "/api/v1/tasks/%0A",
        "/api/v1/nothing/here",
        "/api/v1/tasks/a%2Fb",
    ],
)
def test_an_unknown_api_path_is_a_json_404(viewer: APIClient, path: str) -> None:
    response = viewer.get(path)
    assert response.status_code == 404
    assert response.json() == {"detail": "Not found.", "errors": {}}
