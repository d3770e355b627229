"""YAML aliases are refused wherever a user's YAML is read (issue 28: a 486-character
"billion laughs" manifest took 14.7 s and 1.1 GB in the dashboard what-if)."""

from __future__ import annotations

import time

import pytest

from scheduler_api.engine.whatif.profiles import ProfileError
from topology.forms.whatif import WhatIfForms
from topology.parsers.scheduler_config import profiles_from_text
from topology.services.mirror.loading import LoadError, parse_documents

LAUGHS = "\n".join(
    ["a: &a [x, x, x, x, x, x, x, x, x]"]
    + [f"{chr(98 + i)}: &{chr(98 + i)} [*{chr(97 + i)}" + f", *{chr(97 + i)}" * 8 + "]"
       for i in range(8)]
    + ["kind: Pod", "spec: {containers: [{name: c, env: *i}]}"]
)  # fmt: skip


def test_an_import_refuses_aliases_at_once() -> None:
    start = time.perf_counter()
    with pytest.raises(LoadError, match="aliases"):
        parse_documents(LAUGHS)
    assert time.perf_counter() - start < 0.5


def test_a_scheduler_configuration_refuses_aliases() -> None:
    with pytest.raises(ProfileError, match="aliases"):
        profiles_from_text(LAUGHS, source="upload")


def test_the_dashboard_manifest_refuses_aliases_as_a_form_error() -> None:
    start = time.perf_counter()
    forms = WhatIfForms({"manifest": LAUGHS})
    assert not forms.is_valid()
    assert "aliases" in " ".join(forms.pod.errors["manifest"])
    assert time.perf_counter() - start < 0.5


def test_plain_yaml_still_loads() -> None:
    (pod,) = parse_documents("kind: Pod\nmetadata: {name: p}\n")
    assert pod["metadata"]["name"] == "p"
