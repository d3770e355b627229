"""Unknown body fields: warned of by default, refused with `fieldValidation=Strict`, ignored
with `fieldValidation=Ignore`, as the Kubernetes API server does."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pytest
from django.test import RequestFactory
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.test import APIClient

from scheduler_api.api.field_validation import (
    DUPLICATE_FIELD,
    MAX_WARNINGS,
    KnownFieldsMixin,
    field_warning,
    unknown_fields,
    warning_header,
)
from scheduler_api.api.parsers import RepeatedKeys
from scheduler_api.api.serializers.policies import NodePolicySerializer
from scheduler_api.api.serializers.whatif import WhatIfRequestSerializer
from topology.models import Cluster, Node, NodePolicy

from .mixins import ClientFor
from .test_whatif import manifest, same_answer

pytestmark = pytest.mark.django_db
WHATIF = "/api/v1/clusters/trio/whatif"
KOORD_NODE = "worker-03"


def warnings_of(response: Any) -> str:
    return str(response.headers.get("Warning", ""))


# What counts as unknown --------------------------------------------------------------------


def test_nested_keys_are_named_by_their_dotted_path() -> None:
    body = {
        "containers": [
            {"name": "a", "requests": {"cpu": "1"}},
            {"name": "b", "request": {"cpu": "1"}},
        ],
        "capacty": False,
    }
    assert unknown_fields(WhatIfRequestSerializer(), body) == ["containers.1.request", "capacty"]


def test_free_form_maps_and_the_pod_manifest_take_any_key() -> None:
    body = {
        "pod": {**manifest(), "anything": 1},
        "replicas": 1,
        "weights": {"cpu": 1, "example.com/gpu": 2},
    }
    assert unknown_fields(WhatIfRequestSerializer(), body) == []
    compact = {
        "containers": [{"name": "a", "requests": {"any.resource/name": "1"}}],
        "labels": {"any-label": "x"},
        "annotations": {"any/annotation": "y"},
    }
    assert unknown_fields(WhatIfRequestSerializer(), compact) == []


def test_read_only_fields_are_known_so_a_body_copied_from_a_get_is_not_warned_about() -> None:
    body = {"node": "worker-03", "updated_at": "2026-11-28T10:00:00Z", "cpu_bind_policy": None}
    assert unknown_fields(NodePolicySerializer(), body) == []
    assert unknown_fields(NodePolicySerializer(), {**body, "cpu_bind_polcy": None}) == [
        "cpu_bind_polcy"
    ]


def test_a_body_of_the_wrong_type_has_no_unknown_fields() -> None:
    assert unknown_fields(WhatIfRequestSerializer(), ["capacity"]) == []
    assert unknown_fields(WhatIfRequestSerializer(), {"containers": "a"}) == []


def test_without_a_request_in_its_context_a_serializer_does_not_look() -> None:
    serializer = WhatIfRequestSerializer(data={"pod": manifest(), "capacty": False})
    assert serializer.is_valid(), serializer.errors


def test_only_the_outermost_serializer_looks() -> None:
    """A nested serializer with the mixin is checked once, by its parent, by path."""

    class Inner(KnownFieldsMixin, serializers.Serializer):
        size = serializers.IntegerField()

    class Outer(KnownFieldsMixin, serializers.Serializer):
        inner = Inner()

    request = Request(RequestFactory().post("/?fieldValidation=Strict"))
    body = {"inner": {"size": 1, "typo": 1}}
    serializer = Outer(data=body, context={"request": request})
    assert not serializer.is_valid()
    assert serializer.errors == {"inner.typo": ["Unknown field."]}


# The Warning header -----------------------------------------------------------------------


def test_the_warning_reads_as_kubernetes_writes_it() -> None:
    assert warning_header([field_warning("spec.foo")]) == ('299 - "unknown field \\"spec.foo\\""')


def test_quotes_control_characters_and_non_ascii_in_a_key_stay_inside_one_header_line() -> None:
    header = warning_header([field_warning('a"b\\c\r\nX-Injected: 1\u00e9')])
    assert header.isascii() and "\r" not in header and "\n" not in header
    assert header.startswith('299 - "') and header.endswith('"')
    inner = header[len('299 - "') : -1]
    assert '"' not in inner.replace('\\"', "")  # every quote inside is escaped


def test_a_long_key_is_cut_short_and_many_warnings_are_summed_up() -> None:
    assert len(field_warning("k" * 10_000)) < 300
    header = warning_header([field_warning(f"f{i}") for i in range(MAX_WARNINGS + 5)])
    assert header.count("299 -") == MAX_WARNINGS + 1
    assert "5 more warnings not listed" in header


# Repeated keys ----------------------------------------------------------------------------


def repeated(text: str) -> tuple[Any, list[str]]:
    hook = RepeatedKeys()
    data = json.loads(text, object_pairs_hook=hook)
    return data, hook.paths(data)


def test_repeated_keys_are_named_by_path_and_the_last_value_wins_as_json_does() -> None:
    text = '{"a": 1, "b": {"c": 1, "c": 2}, "a": 3, "l": [{"x": 1}, {"x": 1, "x": 5}]}'
    data, paths = repeated(text)
    assert data == json.loads(text) == {"a": 3, "b": {"c": 2}, "l": [{"x": 1}, {"x": 5}]}
    assert paths == ["a", "b.c", "l.1.x"]


def test_a_repeat_inside_a_value_that_lost_is_not_named() -> None:
    """Its dict is gone from the body; a later dict must not take its place (same id)."""
    later = ", ".join(['{"y": 1}'] * 50)
    text = '{"o": {"a": {"x": 1, "x": 2}, "a": {}}, "z": [' + later + "]}"
    assert repeated(text)[1] == ["o.a"]


def test_a_body_without_repeats_has_none() -> None:
    assert repeated('{"a": {"b": [1, {"c": 2}]}, "d": "a"}')[1] == []


def test_a_repeated_key_is_warned_of_and_the_last_value_is_taken(
    operator: APIClient, trio: Cluster
) -> None:
    body = '{"pod": POD, "replicas": 3, "replicas": 0}'.replace("POD", json.dumps(manifest()))
    response = operator.post(WHATIF, body, content_type="application/json")
    assert response.status_code == 200, response.content
    assert warnings_of(response) == '299 - "duplicate field \\"replicas\\""'
    assert response.json()["placements"] == []  # replicas 0: verdicts only


def test_strict_refuses_a_repeated_key_and_an_unknown_one_alike(
    operator: APIClient, trio: Cluster
) -> None:
    body = '{"pod": POD, "capacty": 1, "capacty": 2}'.replace("POD", json.dumps(manifest()))
    response = operator.post(
        f"{WHATIF}?fieldValidation=Strict", body, content_type="application/json"
    )
    assert response.status_code == 400
    assert response.json()["errors"] == {"capacty": ["Unknown field.", DUPLICATE_FIELD]}


def test_the_parser_still_refuses_what_drfs_refuses(operator: APIClient, trio: Cluster) -> None:
    for body in ('{"pod": {}, "replicas": NaN}', '{"pod": '):
        response = operator.post(WHATIF, body, content_type="application/json")
        assert response.status_code == 400
        assert response.json()["detail"].startswith("JSON parse error")


# Over the API: the what-if ----------------------------------------------------------------


def test_a_typo_is_warned_of_and_the_question_runs_as_before(
    operator: APIClient, trio: Cluster
) -> None:
    plain = operator.post(WHATIF, {"pod": manifest()}, format="json")
    typo = operator.post(WHATIF, {"pod": manifest(), "capacty": False}, format="json")
    assert typo.status_code == 200, typo.content
    assert warnings_of(typo) == '299 - "unknown field \\"capacty\\""'
    assert typo.json()["capacity"] is not None  # the typo did not turn the count off
    assert same_answer(typo.json(), plain.json())
    assert "Warning" not in plain.headers


def test_strict_refuses_a_typo_with_the_one_error_shape(operator: APIClient, trio: Cluster) -> None:
    response = operator.post(
        f"{WHATIF}?fieldValidation=Strict",
        {"containers": [{"name": "a", "request": {"cpu": "1"}}], "capacty": False},
        format="json",
    )
    assert response.status_code == 400
    assert response.json() == {
        "detail": "Invalid input.",
        "errors": {
            "containers.0.request": ["Unknown field."],
            "capacty": ["Unknown field."],
        },
    }


def test_strict_names_the_other_errors_of_the_body_too(operator: APIClient, trio: Cluster) -> None:
    body = {"pod": manifest(), "replicas": -1, "capacty": False}
    response = operator.post(f"{WHATIF}?fieldValidation=Strict", body, format="json")
    assert response.status_code == 400
    assert set(response.json()["errors"]) == {"replicas", "capacty"}


def test_strict_answers_a_body_without_unknown_fields(operator: APIClient, trio: Cluster) -> None:
    response = operator.post(f"{WHATIF}?fieldValidation=Strict", {"pod": manifest()}, format="json")
    assert response.status_code == 200 and "Warning" not in response.headers


def test_ignore_drops_them_silently(operator: APIClient, trio: Cluster) -> None:
    body = {"pod": manifest(), "capacty": False}
    response = operator.post(f"{WHATIF}?fieldValidation=Ignore", body, format="json")
    assert response.status_code == 200 and "Warning" not in response.headers


@pytest.mark.parametrize("mode", ["strict", "STRICT", "Fail", ""])
def test_a_mode_that_is_not_one_of_the_three_is_a_400_naming_it(
    mode: str, operator: APIClient, trio: Cluster
) -> None:
    response = operator.post(f"{WHATIF}?fieldValidation={mode}", {"pod": manifest()}, format="json")
    assert response.status_code == 400
    errors = response.json()["errors"]
    assert list(errors) == ["fieldValidation"]
    assert "Ignore, Warn, Strict" in errors["fieldValidation"][0]


def test_credentials_are_checked_before_the_body(client_for: ClientFor, trio: Cluster) -> None:
    body = {"pod": manifest(), "capacty": False}
    anonymous = client_for("anonymous").post(f"{WHATIF}?fieldValidation=Bad", body, format="json")
    assert anonymous.status_code == 401 and "Warning" not in anonymous.headers
    viewer = client_for("viewer").post(WHATIF, body, format="json")
    assert viewer.status_code == 403 and "Warning" not in viewer.headers


def test_a_malformed_body_is_a_400_that_still_warns(operator: APIClient, trio: Cluster) -> None:
    response = operator.post(WHATIF, {"pod": manifest(), "replicas": -1, "x": 1}, format="json")
    assert response.status_code == 400
    assert list(response.json()["errors"]) == ["replicas"]
    assert 'unknown field \\"x\\"' in warnings_of(response)


# Every operation that reads a body --------------------------------------------------------


@dataclass(frozen=True)
class BodyCase:
    """One operation that reads a body: a valid body plus one unknown field at `unknown`."""

    method: str
    path: str
    body: dict[str, Any]
    unknown: str
    ok: int
    state: Callable[[], Any]  # what a refused request must leave as it was


def _policy_state() -> Any:
    return list(NodePolicy.objects.values_list("node__name", "numa_topology_policy"))


def _cluster_state() -> Any:
    return list(Cluster.objects.order_by("name").values_list("name", "description"))


BODY_CASES = {
    "whatif": BodyCase(
        "post", WHATIF, {"pod": manifest(), "capacty": False}, "capacty", 200, lambda: None
    ),
    "reservation preview": BodyCase(
        "post",
        "/api/v1/clusters/trio/reservations",
        {
            "containers": [{"name": "web", "requests": {"cpu": "2", "memory": "1Gi"}}],
            "node": KOORD_NODE,
            "owners": [{"labelSelector": {"matchLabels": {"app": "web"}, "matchLabel": {}}}],
            "preview": True,
        },
        "owners.0.labelSelector.matchLabel",
        200,
        lambda: None,
    ),
    "policy put": BodyCase(
        "put",
        f"/api/v1/clusters/trio/policies/{KOORD_NODE}",
        {"numa_topology_policy": "SingleNUMANode", "cpu_bind_polcy": "FullPCPUs"},
        "cpu_bind_polcy",
        200,
        _policy_state,
    ),
    "policy patch": BodyCase(
        "patch",
        f"/api/v1/clusters/trio/policies/{KOORD_NODE}",
        {"numa_topology_policy": "SingleNUMANode", "numa_policy": "x"},
        "numa_policy",
        200,
        _policy_state,
    ),
    "policy preview": BodyCase(
        "post",
        "/api/v1/clusters/trio/policies/preview",
        {"nodes": [KOORD_NODE], "reference_pods": [{"name": "four", "cpus": 4, "cpu": 8}]},
        "reference_pods.0.cpu",
        200,
        lambda: None,
    ),
    "cluster create": BodyCase(
        "post",
        "/api/v1/clusters",
        {"name": "staging", "descripton": "a typo"},
        "descripton",
        201,
        _cluster_state,
    ),
    "cluster update": BodyCase(
        "patch",
        "/api/v1/clusters/trio",
        {"description": "renamed", "nme": "other"},
        "nme",
        200,
        _cluster_state,
    ),
}


@pytest.fixture
def draft(trio: Cluster) -> NodePolicy:
    """worker-03's saved draft, which the policy preview needs."""
    node = Node.objects.get(cluster=trio, name=KOORD_NODE)
    return NodePolicy.objects.create(node=node, numa_topology_policy="Restricted")


def send(client: APIClient, case: BodyCase, query: str = "") -> Any:
    return getattr(client, case.method)(f"{case.path}{query}", case.body, format="json")


@pytest.mark.parametrize("name", BODY_CASES)
def test_every_operation_warns_of_an_unknown_field_and_answers(
    name: str, admin: APIClient, draft: NodePolicy
) -> None:
    case = BODY_CASES[name]
    response = send(admin, case)
    assert response.status_code == case.ok, response.content
    assert warnings_of(response) == f'299 - "unknown field \\"{case.unknown}\\""'


@pytest.mark.parametrize("name", BODY_CASES)
def test_every_operation_refuses_an_unknown_field_when_strict_and_writes_nothing(
    name: str, admin: APIClient, draft: NodePolicy
) -> None:
    case = BODY_CASES[name]
    before = case.state()
    response = send(admin, case, "?fieldValidation=Strict")
    assert response.status_code == 400, response.content
    assert response.json()["errors"] == {case.unknown: ["Unknown field."]}
    assert case.state() == before


def test_the_schema_offers_field_validation_on_exactly_the_operations_that_read_a_body(
    viewer: APIClient,
) -> None:
    schema = viewer.get("/api/schema/", {"format": "json"}).json()
    with_body, with_parameter = set(), set()
    for path, operations in schema["paths"].items():
        for method, operation in operations.items():
            if "requestBody" in operation:
                with_body.add((method, path))
            if "fieldValidation" in {p["name"] for p in operation.get("parameters", [])}:
                with_parameter.add((method, path))
                success = [r for code, r in operation["responses"].items() if code < "300"]
                assert all("Warning" in response["headers"] for response in success)
    assert with_parameter == with_body
    assert with_body == {(case.method, schema_path(case.path)) for case in BODY_CASES.values()}


def schema_path(path: str) -> str:
    """/api/v1/clusters/trio/policies/worker-03 → /api/v1/clusters/{cluster}/policies/{node}"""
    parts = path.split("/")
    if len(parts) > 4:
        parts[4] = "{cluster}"
    if len(parts) > 6 and parts[5] == "policies" and parts[6] == KOORD_NODE:
        parts[6] = "{node}"
    return "/".join(parts)
