"""Documents nested thousands deep are refused with a clear error, never a server error
(issue 28: JSON nested ~950 deep on any API body, a `pod` nested 500 deep)."""

from __future__ import annotations

import pytest

from topology.parsers.nesting import TooDeep, check_nesting
from topology.services.mirror.loading import LoadError, parse_documents
from topology.services.whatif.service import WhatIfInputError, pod_from_manifest


def nested(depth: int) -> object:
    value: object = "x"
    for _ in range(depth):
        value = {"a": [value]}
    return value


def test_the_check_is_iterative_and_names_the_limit() -> None:
    check_nesting(nested(40))
    with pytest.raises(TooDeep, match="nested more than 100"):
        check_nesting(nested(100_000))


def test_a_deep_pod_is_a_field_error() -> None:
    with pytest.raises(WhatIfInputError) as caught:
        pod_from_manifest({"kind": "Pod", "spec": nested(500)})
    assert "pod" in caught.value.field_errors


@pytest.mark.parametrize("depth", [200, 5_000])
def test_deep_json_and_yaml_imports_are_refused(depth: int) -> None:
    with pytest.raises(LoadError, match="nested more than"):
        parse_documents("[" * depth + "]" * depth)
    with pytest.raises(LoadError, match="nested more than"):
        parse_documents("a: " + "[" * depth + "]" * depth)
