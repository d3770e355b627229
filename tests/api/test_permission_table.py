"""Issue 27 §6 / issue 28 §9: every API operation, asked by every kind of user, answers
exactly as the roles table of the README says: anonymous 401, a role below the one the
operation needs 403, anyone else is let through (to a 2xx, a 400 or a 404: not a refusal).

The table is the contract: an operation added to the schema without a row here fails.
"""

from __future__ import annotations

from typing import Any

import pytest
from django.contrib.auth.models import Group
from drf_spectacular.generators import SchemaGenerator
from rest_framework.test import APIClient

from topology.models import Cluster

RANK = {"outsider": 0, "viewer": 1, "operator": 2, "admin": 3}
NEEDS = {
    ("GET", "/api/v1/clusters"): "viewer",
    ("POST", "/api/v1/clusters"): "admin",
    ("GET", "/api/v1/clusters/{cluster}"): "viewer",
    ("PATCH", "/api/v1/clusters/{cluster}"): "admin",
    ("DELETE", "/api/v1/clusters/{cluster}"): "admin",
    ("GET", "/api/v1/clusters/{cluster}/applies"): "viewer",
    ("GET", "/api/v1/clusters/{cluster}/applies/{apply}"): "viewer",
    ("GET", "/api/v1/clusters/{cluster}/export"): "viewer",
    ("GET", "/api/v1/clusters/{cluster}/node-reservations"): "viewer",
    ("GET", "/api/v1/clusters/{cluster}/node-reservations/{node}"): "viewer",
    ("GET", "/api/v1/clusters/{cluster}/nodes"): "viewer",
    ("GET", "/api/v1/clusters/{cluster}/nodes/{node}"): "viewer",
    ("GET", "/api/v1/clusters/{cluster}/nodes/{node}/topology"): "viewer",
    ("GET", "/api/v1/clusters/{cluster}/pods"): "viewer",
    ("GET", "/api/v1/clusters/{cluster}/pods/{namespace}/{name}"): "viewer",
    ("GET", "/api/v1/clusters/{cluster}/pods/{namespace}/{name}/diagnosis"): "viewer",
    ("GET", "/api/v1/clusters/{cluster}/diagnoses"): "viewer",
    ("GET", "/api/v1/clusters/{cluster}/findings"): "viewer",
    ("GET", "/api/v1/clusters/{cluster}/agreement"): "viewer",
    ("GET", "/api/v1/clusters/{cluster}/agreement/pods"): "viewer",
    ("GET", "/api/v1/clusters/{cluster}/predictions"): "viewer",
    ("GET", "/api/v1/clusters/{cluster}/history"): "viewer",
    ("GET", "/api/v1/clusters/{cluster}/predictions/{prediction}"): "viewer",
    ("GET", "/api/v1/clusters/{cluster}/policies"): "viewer",
    ("GET", "/api/v1/clusters/{cluster}/policies/{node}"): "viewer",
    ("PUT", "/api/v1/clusters/{cluster}/policies/{node}"): "operator",
    ("PATCH", "/api/v1/clusters/{cluster}/policies/{node}"): "operator",
    ("DELETE", "/api/v1/clusters/{cluster}/policies/{node}"): "operator",
    ("POST", "/api/v1/clusters/{cluster}/policies/{node}/apply"): "admin",
    ("GET", "/api/v1/clusters/{cluster}/policies/{node}/diff"): "viewer",
    ("POST", "/api/v1/clusters/{cluster}/policies/preview"): "operator",
    ("GET", "/api/v1/clusters/{cluster}/qos"): "viewer",
    ("POST", "/api/v1/clusters/{cluster}/qos/apply"): "admin",
    ("GET", "/api/v1/clusters/{cluster}/qos/nodes"): "viewer",
    ("GET", "/api/v1/clusters/{cluster}/reservations"): "viewer",
    ("POST", "/api/v1/clusters/{cluster}/reservations"): "operator",  # creating: admin
    ("GET", "/api/v1/clusters/{cluster}/reservations/{reservation}"): "viewer",
    ("POST", "/api/v1/clusters/{cluster}/whatif"): "operator",
    ("GET", "/api/v1/tasks/{task}"): "operator",
}
PARAMETERS = {
    "cluster": "trio",
    "node": "worker-03",
    "reservation": "resv-worker-03-web",
    "namespace": "default",
    "name": "some-pod",
    "apply": "1",
    "prediction": "1",
    "task": "00000000-0000-0000-0000-000000000000",
}
WRITES_LAST = {"DELETE": 1}  # deleting the cluster must not hide the other operations


def schema_operations() -> list[tuple[str, str]]:
    paths = SchemaGenerator().get_schema(request=None, public=True)["paths"]
    methods = ("get", "post", "put", "patch", "delete")
    found = [(m.upper(), path) for path, ops in paths.items() for m in ops if m in methods]
    return sorted(found, key=lambda op: (WRITES_LAST.get(op[0], 0), op[1], op[0]))


def test_the_table_names_every_operation_of_the_schema() -> None:
    assert set(schema_operations()) == set(NEEDS)


def client_as(persona: str, django_user_model: Any) -> APIClient:
    client = APIClient()
    if persona != "anonymous":
        user = django_user_model.objects.create_user(persona, password=None)
        if persona in RANK and persona != "outsider":
            user.groups.add(Group.objects.get(name=persona))
        client.force_authenticate(user)
    return client


@pytest.mark.django_db
@pytest.mark.parametrize("persona", ["anonymous", "outsider", "viewer", "operator", "admin"])
def test_every_operation_answers_each_persona_as_the_table_says(
    persona: str, django_user_model: Any, role_groups: Any, trio: Cluster
) -> None:
    client = client_as(persona, django_user_model)
    wrong = []
    for method, path in schema_operations():
        url = path.format(**PARAMETERS)
        response = getattr(client, method.lower())(url, {}, format="json")
        status = response.status_code
        if persona == "anonymous":
            expected_refusal: int | None = 401
        else:
            expected_refusal = 403 if RANK[persona] < RANK[NEEDS[(method, path)]] else None
        refused = status in (401, 403)
        if (expected_refusal is None and refused) or (
            expected_refusal is not None and status != expected_refusal
        ):
            wrong.append((method, path, status, expected_refusal))
        assert status < 500, (method, path, status)
    assert not wrong, wrong
