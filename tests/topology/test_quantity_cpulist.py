from decimal import Decimal

import pytest
from hypothesis import given
from hypothesis import strategies as st

from topology.parsers.cpulist import format_cpulist, parse_cpulist
from topology.parsers.duration import format_go_duration, parse_go_duration
from topology.parsers.errors import FieldError
from topology.parsers.quantity import format_quantity, parse_quantity, to_base_units


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        pytest.param("500m", Decimal("0.5"), id="milli"),
        pytest.param("1.5", Decimal("1.5"), id="decimal-fraction"),
        pytest.param("4Gi", Decimal(4 * 2**30), id="binary-suffix"),
        pytest.param("1e3", Decimal(1000), id="exponent"),
        pytest.param("100M", Decimal(100_000_000), id="decimal-suffix"),
        pytest.param("131846060Ki", Decimal(131846060 * 1024), id="kibibytes"),
        pytest.param("0.1", Decimal("0.1"), id="exact-tenth-not-float"),
    ],
)
def test_it_parses_quantities_exactly(text, expected):
    assert parse_quantity(text) == expected


@pytest.mark.parametrize(
    ("resource", "text", "base"),
    [
        pytest.param("cpu", "500m", 500, id="cpu-millicores"),
        pytest.param("cpu", "1.5", 1500, id="cpu-fraction"),
        pytest.param("cpu", "0.0001", 1, id="cpu-rounds-up-like-MilliValue"),
        pytest.param("memory", "4Gi", 4 * 2**30, id="memory-bytes"),
        pytest.param("memory", "1.5Ki", 1536, id="memory-fractional-suffix"),
        pytest.param("memory", "100m", 1, id="memory-rounds-up-like-Value"),
        pytest.param("nvidia.com/gpu", "2", 2, id="device-count"),
        pytest.param("kubernetes.io/batch-cpu", "8522", 8522, id="batch-cpu-is-millis"),
    ],
)
def test_it_converts_to_base_units(resource, text, base):
    assert to_base_units(resource, text) == base


@pytest.mark.parametrize("text", ["", "abc", "1.2.3", "4GiB", "--1", "1Z", "Gi"])
def test_it_rejects_bad_quantities(text):
    with pytest.raises(FieldError, match="not a Kubernetes quantity"):
        parse_quantity(text)


def test_it_rejects_negative_amounts():
    with pytest.raises(FieldError, match="negative"):
        to_base_units("cpu", "-1")


@given(st.integers(min_value=0, max_value=2**50), st.sampled_from(["cpu", "memory", "pods"]))
def test_formatting_round_trips(amount, resource):
    assert to_base_units(resource, format_quantity(resource, amount)) == amount


@pytest.mark.parametrize(
    ("text", "cpus", "canonical"),
    [
        pytest.param("0-3,8,10-11", {0, 1, 2, 3, 8, 10, 11}, "0-3,8,10-11", id="mixed"),
        pytest.param("10-11,8,0-3", {0, 1, 2, 3, 8, 10, 11}, "0-3,8,10-11", id="unsorted"),
        pytest.param("3,1,2", {1, 2, 3}, "1-3", id="collapses-runs"),
        pytest.param("", set(), "", id="empty"),
        pytest.param(" 4 - 5 ".replace(" ", ""), {4, 5}, "4-5", id="range"),
    ],
)
def test_cpulists_parse_and_print_canonically(text, cpus, canonical):
    assert parse_cpulist(text) == frozenset(cpus)
    assert format_cpulist(parse_cpulist(text)) == canonical


@pytest.mark.parametrize(
    "text",
    # Go's cpuset.Parse (strconv.Atoi) refuses spaces, underscores and trailing commas too
    ["a", "3-1", "1,,2", "1-", "-1", "1-2-3", "0-3, 8", " 2", "1_0", "0-3,", "\u0663"],
)
def test_it_rejects_bad_cpulists(text):
    with pytest.raises(FieldError):
        parse_cpulist(text)


@given(st.frozensets(st.integers(min_value=0, max_value=1023)))
def test_cpulist_round_trips(cpus):
    assert parse_cpulist(format_cpulist(cpus)) == cpus


@pytest.mark.parametrize(
    ("text", "seconds"),
    [("12h0m0s", 43200), ("1h", 3600), ("30m0s", 1800), ("1.5h", 5400), ("45s", 45), ("0", 0)],
)
def test_it_parses_go_durations(text, seconds):
    assert parse_go_duration(text) == seconds
    assert parse_go_duration(format_go_duration(seconds)) == seconds


@pytest.mark.parametrize("text", ["", "1d", "h", "10", "1h-5m"])
def test_it_rejects_bad_durations(text):
    with pytest.raises(FieldError):
        parse_go_duration(text)


def test_a_memoised_quantity_is_refused_every_time_and_keeps_its_type_rules():
    for _ in range(2):  # the second call would hit the cache if an error were kept
        with pytest.raises(FieldError, match="negative"):
            to_base_units("cpu", "-1")
    assert to_base_units("cpu", "2") == to_base_units("cpu", 2) == 2000
    with pytest.raises(FieldError, match="got True"):
        to_base_units("cpu", True)  # a bool is not a quantity, memoised or not


def test_a_memoised_cpulist_is_refused_every_time_and_parses_to_the_same_set():
    for _ in range(2):
        with pytest.raises(FieldError):
            parse_cpulist("3-1")
    assert parse_cpulist("0-3") is parse_cpulist("0-3")  # a frozenset: safe to share
    with pytest.raises(FieldError, match="expected a cpulist string"):
        parse_cpulist(7)
