"""Quantities are bounded the way Kubernetes counts them: any input is parsed or refused
with a field error at once (issue 28: "1e999999" stalled a worker for a minute)."""

from __future__ import annotations

import time

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from topology.parsers.errors import FieldError
from topology.parsers.quantity import MAX_AMOUNT, parse_resource_list, to_base_units

REFUSED = ["1e999999", "1e1000000", "1e308", "9" * 30, "١", "2\u00a0", "1e" + "9" * 70]


@pytest.mark.parametrize("text", REFUSED)
@pytest.mark.parametrize("resource", ["cpu", "memory"])
def test_a_huge_or_foreign_quantity_is_refused_at_once(text: str, resource: str) -> None:
    start = time.perf_counter()
    with pytest.raises(FieldError):
        to_base_units(resource, text)
    assert time.perf_counter() - start < 0.05


def test_binary_amounts_are_capped_as_parse_quantity_caps_them() -> None:
    assert to_base_units("memory", "8Ei") == MAX_AMOUNT
    with pytest.raises(FieldError, match="2\\^63"):
        to_base_units("cpu", "1Ei")  # in millicores it no longer fits


def test_ordinary_quantities_still_parse() -> None:
    assert to_base_units("cpu", "500m") == 500
    assert to_base_units("memory", " 4Gi ") == 4 * 2**30  # UnmarshalJSON trims spaces
    assert to_base_units("memory", "1e-999999") == 1  # a positive amount rounds up to 1
    assert to_base_units("memory", "0E3000000") == 0  # found by the fuzz test below
    assert to_base_units("memory", 2**40) == 2**40
    with pytest.raises(FieldError):
        to_base_units("memory", 2**70)


@settings(max_examples=300, deadline=None)
@given(
    st.one_of(
        st.text(max_size=80),
        st.from_regex(
            r"[+-]?[0-9.]{0,40}([eE][+-]?[0-9]{0,12}|[KMGTPE]i|[numkMGTPE])?", fullmatch=True
        ),
    )
)
def test_any_text_is_parsed_or_refused_within_50_ms(text: str) -> None:
    start = time.perf_counter()
    try:
        amounts = parse_resource_list({"memory": text, "cpu": text})
    except FieldError:
        pass
    else:
        assert all(0 <= amount <= MAX_AMOUNT for amount in amounts.values())
    assert time.perf_counter() - start < 0.05


@pytest.mark.django_db
def test_an_import_skips_the_object_with_a_huge_quantity_and_keeps_the_rest() -> None:
    from tests.topology.helpers import sample_items
    from topology.models import Node, Pod
    from topology.services.mirror.importer import import_objects

    items = sample_items("cluster-small.json")
    bad = next(i for i in items if i["kind"] == "Pod")
    bad["spec"]["containers"][0].setdefault("resources", {})["requests"] = {"memory": "1e999999"}
    start = time.perf_counter()
    summary = import_objects(cluster_name="small", objects=items)
    assert time.perf_counter() - start < 30
    assert not summary.ok
    assert any(bad["metadata"]["name"] in str(error) for error in summary.errors)
    assert Node.objects.filter(cluster__name="small").count() == 8
    assert not Pod.objects.filter(name=bad["metadata"]["name"]).exists()
    assert Pod.objects.filter(cluster__name="small").exists()
