"""The what-if views' orjson renderer gives what DRF's JSONRenderer gives."""

from __future__ import annotations

import json
from decimal import Decimal

import orjson
from django.utils.translation import gettext_lazy
from rest_framework.exceptions import ErrorDetail
from rest_framework.renderers import JSONRenderer

from scheduler_api.api.renderers import FastJSONRenderer

PAYLOAD = {
    "scheduler": "auto",
    "data_age_seconds": 1.25,
    "nodes": [{"node": "nœud-1", "fits": True, "score": 87, "cpuset": [2, 3], "notes": []}],
    "capacity": {"total": 12, "per_node": {"nœud-1": 12}},
    "detail": ErrorDetail("bad value", code="invalid"),
    "lazy": gettext_lazy("This field is required."),
    "amount": Decimal("1.50"),
    "missing": None,
}


def test_the_same_json_as_drf_renders() -> None:
    fast = FastJSONRenderer().render(PAYLOAD, "application/json", {})
    drf = JSONRenderer().render(PAYLOAD, "application/json", {})
    assert json.loads(fast) == json.loads(drf)
    assert "nœud-1".encode() in fast  # UTF-8, not \\u escapes, as DRF's default


def test_indent_asked_for_in_accept_pretty_prints() -> None:
    rendered = FastJSONRenderer().render({"a": [1]}, "application/json; indent=4", {})
    assert json.loads(rendered) == {"a": [1]}
    assert b'\n  "a"' in rendered


def test_fragments_are_written_as_they_are() -> None:
    payload = {"scheduler": "auto", "nodes": orjson.Fragment(b'[{"node":"n1","fits":true}]')}
    for media_type in ("application/json", "application/json; indent=2"):
        rendered = FastJSONRenderer().render(payload, media_type, {})
        assert json.loads(rendered) == {
            "scheduler": "auto",
            "nodes": [{"node": "n1", "fits": True}],
        }


def test_nothing_renders_as_an_empty_body() -> None:
    assert FastJSONRenderer().render(None, "application/json", {}) == b""
