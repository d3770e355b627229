"""Response bodies and watch lines decode as the json module decodes them, faster."""

import json
import math

import pytest

from topology.sync.client import decode_json


def test_a_list_body_decodes_as_json_decodes_it():
    body = {
        "kind": "PodList",
        "metadata": {"resourceVersion": "42", "continue": ""},
        "items": [
            {"metadata": {"name": "p-ü", "labels": {"a": "b"}}, "spec": {"priority": -7}},
            {"n": [1.5, 1e-7, 2**63 - 1, -(2**63), True, None, "\u2603"]},
        ],
    }
    for data in (json.dumps(body).encode(), json.dumps(body, ensure_ascii=False), b'{"a":1}\n'):
        assert decode_json(data) == json.loads(data)


@pytest.mark.parametrize(
    "data",
    [
        pytest.param(b'{"value": NaN}', id="nan"),
        pytest.param('{"s": "\\ud800"}', id="lone-surrogate-escape"),
        pytest.param(json.dumps({"a": "b"}).encode("utf-16"), id="utf-16-body"),
    ],
)
def test_what_orjson_refuses_and_json_accepts_still_decodes(data):
    decoded, expected = decode_json(data), json.loads(data)
    if "value" in expected:
        assert math.isnan(decoded["value"])
    else:
        assert decoded == expected


def test_a_body_that_is_not_json_is_refused_with_json_s_error():
    with pytest.raises(json.JSONDecodeError, match="Expecting"):
        decode_json(b'{"items": [')
