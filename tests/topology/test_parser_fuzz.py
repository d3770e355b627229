"""Issue 28: any input to the cpulist, manifest and Kubernetes-object parsers is either
read or refused with a field error, quickly (50 ms), never another exception.

Objects are fuzzed by replacing one part (a field, a list item, an annotation value, a
whole section) of a real sample of each mirrored kind with random JSON or with JSON text;
manifests as whole YAML/JSON texts and as mutated Pod objects.
"""

from __future__ import annotations

import copy
import json
import os
import time
from collections.abc import Callable, Iterator
from typing import Any

import pytest
import yaml
from django import forms
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.topology.helpers import sample_items
from topology.forms.whatif import parse_manifest
from topology.parsers import parse_object
from topology.parsers.cpulist import MAX_CPU_ID, parse_cpulist
from topology.parsers.errors import FieldError, ObjectParseError
from topology.services.whatif.service import WhatIfInputError, pod_from_manifest

BUDGET_SECONDS = 0.05
FUZZ = settings(
    max_examples=int(os.environ.get("FUZZ_EXAMPLES", "250")),  # README: a longer run
    deadline=None,
    suppress_health_check=list(HealthCheck),
    database=None,
)
Path = tuple[Any, ...]


def quickly(call: Callable[[], object], refused: tuple[type[Exception], ...]) -> None:
    """`call()` ends in a result or one of `refused`, within the budget (the best of three
    tries: a real stall is slow every time, a pause of a shared machine is not)."""
    times = []
    for _ in range(3):
        start = time.perf_counter()
        try:
            call()
        except refused:
            pass
        times.append(time.perf_counter() - start)
        if times[-1] < BUDGET_SECONDS:
            return
    raise AssertionError(f"took {min(times) * 1000:.0f} ms")


# --- cpulists ------------------------------------------------------------------------

CPULIST_LIKE = st.from_regex(r"[0-9,\- +_]{0,40}", fullmatch=True)


@FUZZ
@given(st.one_of(st.text(max_size=60), CPULIST_LIKE, st.integers(), st.none()))
def test_any_cpulist_is_parsed_or_refused_quickly(text: object) -> None:
    def parse() -> None:
        cpus = parse_cpulist(text)
        assert all(0 <= cpu <= MAX_CPU_ID for cpu in cpus)

    quickly(parse, (FieldError,))


def test_huge_cpulists_are_refused_quickly() -> None:
    for text in ("0-" + "9" * 5000, "0-65535," * 6000, "1," * 40_000, "9" * 30):
        quickly(lambda text=text: parse_cpulist(text), (FieldError,))
        try:
            parse_cpulist(text)
        except FieldError as error:
            assert len(str(error)) < 300  # the message quotes the start, not all of it
        else:
            raise AssertionError(f"{text[:20]!r}… was taken")


# --- Kubernetes objects --------------------------------------------------------------

JSON_VALUES = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**70), max_value=2**70)
    | st.floats(allow_nan=False)
    | st.text(max_size=24)
    | st.from_regex(r"[0-9]{1,4}(m|Ki|Mi|Gi|e[0-9]{1,7})?", fullmatch=True),
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=12), inner, max_size=4)
    ),
    max_leaves=12,
)
REPLACEMENTS = st.one_of(JSON_VALUES, JSON_VALUES.map(json.dumps))


def _samples() -> list[dict[str, Any]]:
    items = sample_items("cluster-small.json")
    for name in ("node-crane.json", "node-koordinator-v1alpha1.json", "reservations.json"):
        items += sample_items(name)
    items += sample_items("slo-controller-config.json")
    wanted: dict[tuple[str, str], dict[str, Any]] = {}
    for item in items:
        wanted.setdefault((item["kind"], item["apiVersion"]), item)
    config = {
        "apiVersion": "kubescheduler.config.k8s.io/v1",
        "kind": "KubeSchedulerConfiguration",
        "profiles": [{"schedulerName": "k"}],
    }
    wanted[("ConfigMap", "scheduler")] = {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"namespace": "kube-system", "name": "scheduler-config"},
        "data": {"config.yaml": yaml.safe_dump(config)},
    }
    return list(wanted.values())


SAMPLES = _samples()


def paths_of(value: Any, prefix: Path = ()) -> Iterator[Path]:
    """Every place in `value` a part can be replaced: each key and each list item."""
    if isinstance(value, dict):
        for key, inner in value.items():
            yield (*prefix, key)
            yield from paths_of(inner, (*prefix, key))
    elif isinstance(value, list):
        for index, inner in enumerate(value[:3]):
            yield (*prefix, index)
            yield from paths_of(inner, (*prefix, index))


def replaced(obj: dict[str, Any], path: Path, value: Any) -> dict[str, Any]:
    changed = copy.deepcopy(obj)
    target: Any = changed
    for step in path[:-1]:
        target = target[step]
    target[path[-1]] = value
    return changed


def test_the_samples_cover_every_mirrored_kind() -> None:
    kinds = {parsed.kind.value for parsed in map(parse_object, SAMPLES) if parsed}
    assert kinds == {
        "Node", "Pod", "NodeResourceTopology", "Reservation", "QoSConfig", "SchedulerConfiguration"
    }  # fmt: skip


@FUZZ
@given(st.data())
def test_any_damaged_object_is_mirrored_or_refused_quickly(data: st.DataObject) -> None:
    sample = data.draw(st.sampled_from(SAMPLES))
    path = data.draw(st.sampled_from(list(paths_of(sample))))
    damaged = replaced(sample, path, data.draw(REPLACEMENTS))
    quickly(lambda: parse_object(damaged), (ObjectParseError,))


# --- manifests -----------------------------------------------------------------------

POD = next(i for i in sample_items("cluster-small.json") if i["kind"] == "Pod")


@FUZZ
@given(st.data())
def test_any_damaged_pod_manifest_is_read_or_refused_quickly(data: st.DataObject) -> None:
    path = data.draw(st.sampled_from(list(paths_of(POD))))
    damaged = replaced(POD, path, data.draw(REPLACEMENTS))
    quickly(lambda: pod_from_manifest(damaged), (WhatIfInputError,))


YAMLISH = st.from_regex(r"[a-zA-Z0-9:{}\[\]\-&*!|>'\", \n]{0,120}", fullmatch=True)


@FUZZ
@given(st.one_of(st.text(max_size=200), YAMLISH, JSON_VALUES.map(json.dumps)))
def test_any_manifest_text_is_read_or_refused_quickly(text: str) -> None:
    def read() -> None:
        pod_from_manifest(parse_manifest(text))

    quickly(read, (forms.ValidationError, WhatIfInputError))


def test_a_boolean_where_an_nrt_list_belongs_is_a_field_error() -> None:
    """Found by the fuzz test: `costs: true` in a zone raised a TypeError."""
    nrt = next(s for s in SAMPLES if s["kind"] == "NodeResourceTopology")
    for path in (("zones", 0, "costs"), ("zones", 0, "resources"), ("attributes",)):
        with pytest.raises(ObjectParseError, match="expected a list, got bool"):
            parse_object(replaced(nrt, path, True))
