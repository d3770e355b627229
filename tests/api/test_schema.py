"""OpenAPI: valid with no warnings, typed, and served with Swagger UI and Redoc offline."""

from __future__ import annotations

import io

import pytest
import yaml
from django.core.management import call_command
from django.test import Client


def test_the_schema_validates_without_warnings(tmp_path) -> None:
    out, err = io.StringIO(), io.StringIO()
    target = tmp_path / "schema.yaml"
    call_command(
        "spectacular", "--validate", "--fail-on-warn", "--file", str(target), stdout=out, stderr=err
    )
    assert "Warning" not in err.getvalue() and "Error" not in err.getvalue(), err.getvalue()
    schema = yaml.safe_load(target.read_text())
    assert all(path.startswith("/api/v1/") for path in schema["paths"])
    assert "bearerAuth" in schema["components"]["securitySchemes"]


def test_every_operation_documents_its_errors(tmp_path) -> None:
    target = tmp_path / "schema.yaml"
    call_command("spectacular", "--file", str(target), stderr=io.StringIO())
    schema = yaml.safe_load(target.read_text())
    for path, operations in schema["paths"].items():
        for method, operation in operations.items():
            assert {"401", "403"} <= set(operation["responses"]), (method, path)
    whatif = schema["paths"]["/api/v1/clusters/{cluster}/whatif"]["post"]
    assert {"200", "202", "400", "429"} <= set(whatif["responses"])
    examples = whatif["requestBody"]["content"]["application/json"]["examples"]
    assert len(examples) >= 2


@pytest.mark.django_db
def test_the_schema_is_served_to_anyone() -> None:
    response = Client().get("/api/schema/")
    assert response.status_code == 200 and b"openapi" in response.content


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("path", "asset"),
    [("/api/schema/swagger-ui/", "swagger-ui-dist"), ("/api/schema/redoc/", "redoc")],
)
def test_the_docs_load_their_assets_from_our_own_static_files(
    path: str, asset: str, settings: object
) -> None:
    """Whatever drf-spectacular's settings say (its default is a CDN), our Redoc page
    loads Redoc from our static files."""
    settings.SPECTACULAR_SETTINGS = {
        **settings.SPECTACULAR_SETTINGS,
        "REDOC_DIST": "https://cdn.jsdelivr.net/npm/redoc@latest",
    }  # type: ignore[attr-defined]
    html = Client().get(path).content.decode()
    assert f"/static/drf_spectacular_sidecar/{asset}" in html
    assert "cdn.jsdelivr.net" not in html and "unpkg.com" not in html


def test_what_the_schema_offers_is_what_validation_takes(tmp_path) -> None:
    """Issue 28: `""` was in the cpu_bind_policy enum but refused; `"pod": null` was
    allowed by the schema but refused; the minimum of a count filter was not documented."""
    import yaml
    from django.core.management import call_command

    path = tmp_path / "schema.yaml"
    call_command("spectacular", "--file", str(path))
    schema = yaml.safe_load(path.read_text())
    request = schema["components"]["schemas"]["NodePolicyRequest"]["properties"]
    for field in ("cpu_bind_policy", "numa_allocate_strategy"):
        offered = {item["$ref"].rsplit("/", 1)[-1] for item in request[field]["oneOf"]}
        assert "BlankEnum" not in offered, field
    assert "BlankEnum" in {
        i["$ref"].rsplit("/", 1)[-1] for i in request["numa_topology_policy"]["oneOf"]
    }
    pod = schema["components"]["schemas"]["WhatIfRequestRequest"]["properties"]["pod"]
    assert pod["type"] == "object" and pod["nullable"] is True
    nodes = schema["paths"]["/api/v1/clusters/{cluster}/nodes"]["get"]["parameters"]
    (count,) = [p for p in nodes if p["name"] == "min_free_exclusive_cpus_in_one_zone"]
    assert count["schema"] == {"type": "integer", "minimum": 0}
