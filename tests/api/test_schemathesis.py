"""schemathesis against our own OpenAPI schema, anonymous and authenticated as each role.

A longer run (README, "Security"): `SCHEMATHESIS_MAX_EXAMPLES=300 .venv/bin/pytest
tests/api/test_schemathesis.py`.

Every operation is fuzzed in-process (WSGI): no response may be a 5xx, and every
response must match the schema (status code, content type, body). Path parameters
name real objects of the sample cluster, so that most requests reach a view's work
rather than a 404. Each example runs in a savepoint rolled back afterwards, so the
database is the same for every example.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import Any

import pytest
import schemathesis
from django.core.signals import request_finished, request_started
from django.db import close_old_connections, transaction
from hypothesis import HealthCheck, settings
from schemathesis.checks import not_a_server_error
from schemathesis.specs.openapi.checks import (
    content_type_conformance,
    response_schema_conformance,
    status_code_conformance,
)

from scheduler_api.services.tokens import api_token_create
from topology.models import Cluster
from webapp.wsgi import application

from .conftest import ROLES

CHECKS = [
    not_a_server_error,
    status_code_conformance,
    content_type_conformance,
    response_schema_conformance,
]
COVERAGE_PERSONA = "operator"
PERSONAS = ("anonymous", *ROLES)
MAX_EXAMPLES = int(os.environ.get("SCHEMATHESIS_MAX_EXAMPLES", "10"))
REAL_OBJECTS = {
    "cluster": "trio",
    "node": "worker-03",
    "reservation": "resv-worker-03-web",
}


@pytest.fixture
def _one_connection() -> Iterator[None]:
    """The WSGI handler would close the test's connection after each request: keep it."""
    request_started.disconnect(close_old_connections)
    request_finished.disconnect(close_old_connections)
    yield
    request_started.connect(close_old_connections)
    request_finished.connect(close_old_connections)


@pytest.fixture(params=PERSONAS)
def persona(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture
def api_schema(trio: Cluster, persona: str, _one_connection: None) -> Any:
    """Random fuzzing for every role; the slower coverage phase (boundary and invalid
    values of every parameter) once, as the operator, who may call every operation."""
    loaded = schemathesis.openapi.from_wsgi("/api/schema/", application)
    loaded.config.update(parameters=REAL_OBJECTS)
    loaded.config.phases.coverage.enabled = persona == COVERAGE_PERSONA
    return loaded


schema = schemathesis.pytest.from_fixture("api_schema")


@pytest.fixture
def bearer(persona: str, user_for: Any) -> dict[str, str]:
    """The Authorization header of a token of the persona (none for anonymous)."""
    if persona == "anonymous":
        return {}
    issued = api_token_create(user=user_for(persona), name="schemathesis")
    return {"Authorization": f"Bearer {issued.plaintext}"}


@pytest.mark.django_db
@pytest.mark.usefixtures("persona")
@schema.parametrize()
@settings(max_examples=MAX_EXAMPLES, deadline=None, suppress_health_check=list(HealthCheck))
def test_no_operation_fails_or_breaks_its_schema(case: Any, bearer: dict[str, str]) -> None:
    with transaction.atomic():
        response = case.call(headers=bearer)
        transaction.set_rollback(True)
    case.validate_response(response, checks=CHECKS, headers=bearer)
