"""The API's "done when", in real Chromium: with an API token and the Swagger UI only (no
session), a platform engineer lists the nodes with room for an exclusive pod, runs a
what-if, reads a node's topology and exports the cluster."""

from __future__ import annotations

import json

import pytest

from scheduler_api.services.tokens import api_token_create
from tests.api.conftest import make_user
from topology.models import Node

from .conftest import Watch, screenshot

SWAGGER = "/api/schema/swagger-ui/"


@pytest.fixture
def swagger(browser, live_server, demo, role_groups):
    """A fresh browser (no session cookie) on the Swagger UI, authorised by a token."""
    token = api_token_create(user=make_user("operator"), name="swagger").plaintext
    context = browser.new_context(
        viewport={"width": 1400, "height": 1000}, base_url=live_server.url
    )
    page = context.new_page()
    watch = Watch(origin=live_server.url.rstrip("/"))
    page.on("pageerror", lambda error: watch.errors.append(str(error)))
    page.on("request", watch.on_request)
    page.goto(SWAGGER)
    page.get_by_role("button", name="Authorize").first.click()
    dialog = page.locator(".auth-container", has_text="bearerAuth")
    dialog.locator("input").fill(token)
    dialog.get_by_role("button", name="Apply credentials").click()
    dialog.get_by_role("button", name="Close").click()
    yield page
    context.close()
    assert watch.errors == [], f"page errors: {watch.errors}"
    assert watch.foreign == [], f"requests outside the server: {watch.foreign}"


def try_it(page, operation: str, parameters: dict[str, str]) -> tuple[str, str]:
    """Expand an operation, fill its parameters, execute; the status and response body."""
    block = page.locator(f"[id$='-{operation}']")
    block.locator(".opblock-summary").first.click()
    block.get_by_role("button", name="Try it out").click()
    for name, value in parameters.items():
        block.locator(f"tr[data-param-name='{name}'] input").fill(value)
    block.get_by_role("button", name="Execute").click()
    live = block.locator(".live-responses-table .response").first
    live.wait_for(timeout=30000)
    status = live.locator(".response-col_status").inner_text().strip()
    body = live.locator(".response-col_description pre").first.inner_text()
    return status, body


def test_a_token_and_the_swagger_ui_are_enough_to_use_the_api(swagger, demo):
    nodes_status, nodes_body = try_it(
        swagger,
        "clusters_nodes_list",
        {"cluster": demo, "min_free_exclusive_cpus_in_one_zone": "4", "page_size": "50"},
    )
    assert nodes_status == "200"
    roomy = [node["name"] for node in json.loads(nodes_body)["results"]]
    assert roomy and set(roomy) < set(
        Node.objects.filter(cluster__name=demo).values_list("name", flat=True)
    )

    whatif_status, whatif_body = try_it(swagger, "clusters_whatif_create", {"cluster": demo})
    assert whatif_status == "200"
    answer = json.loads(whatif_body)
    assert {node["node"] for node in answer["nodes"]} == set(
        Node.objects.filter(cluster__name=demo).values_list("name", flat=True)
    )

    topology_status, topology_body = try_it(
        swagger, "clusters_nodes_topology_retrieve", {"cluster": demo, "node": roomy[0]}
    )
    assert topology_status == "200"
    assert json.loads(topology_body)["zones"]

    export_status, export_body = try_it(swagger, "clusters_export_retrieve", {"cluster": demo})
    assert export_status == "200"
    exported = json.loads(export_body)
    assert exported["kind"] == "List" and exported["items"]
    screenshot(swagger, "swagger-token-export")
