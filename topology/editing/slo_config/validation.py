"""Validation of a slo-controller-config ConfigMap's `data`, before Topolens writes it.

Pure: the data as text per key and a few facts per node in, `QoSIssue`s out. An
"error" is something Kubernetes, Koordinator's webhook, slo-controller or the kernel
would refuse or silently ignore, so it blocks an apply; a "warning" is legal but
probably not meant (an unknown key, LS and BE sharing L3 ways).

What slo-controller does with a bad value matters for the wording: it decodes each
data key with Go's encoding/json, and a key that fails to decode (bad JSON, a
string where a number goes) is logged and the previous config kept, silently.
"""

from __future__ import annotations

import difflib
import re
from collections import Counter
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from topology.editing.slo_config.issues import ERROR, WARNING, QoSIssue, has_errors
from topology.editing.slo_config.json_text import parse_json
from topology.editing.slo_config.node_selectors import (
    SelectorError,
    is_empty,
    parse_selector,
    shared_matches,
    virtual_overlaps,
)
from topology.editing.slo_config.preview import NodeCache, cache_issues
from topology.editing.slo_config.schema import (
    CLASS_KEYS,
    RESOURCE_QOS_CONFIG,
    FieldSpec,
    ListOf,
    Obj,
    Schema,
)
from topology.editing.slo_config.strategies import (
    RESOURCE_QOS_KEY,
    effective_resctrl,
    node_selectors,
    stated_resctrl,
    strategies,
)

__all__ = ["NodeCache", "QoSIssue", "has_errors", "validate_qos_data"]

CONFIGMAP_KEY = re.compile(r"^[-._a-zA-Z0-9]+$")
CONFIGMAP_MAX_BYTES = 1024 * 1024
KEPT_OLD = "slo-controller fails to decode the key and silently keeps its previous config"
_JSON_TYPES = {"bool": "true or false", "int": "an integer", "float": "a number", "str": "a string"}


def validate_qos_data(data: Mapping[str, str], nodes: Sequence[NodeCache]) -> list[QoSIssue]:
    """Every problem found in the ConfigMap data, errors first."""
    issues = list(_data_issues(data))
    text = data.get(RESOURCE_QOS_KEY)
    if text is not None:
        config, problem = parse_json(text)
        if problem is None:
            issues.extend(validate_resource_qos(config, nodes))
    return sorted(issues, key=lambda i: (not i.is_error, i.path))


def validate_resource_qos(config: Any, nodes: Sequence[NodeCache]) -> list[QoSIssue]:
    """Problems in a parsed resource-qos-config: keys, types, ranges, selectors, caches."""
    if not isinstance(config, dict):
        return [QoSIssue(ERROR, RESOURCE_QOS_KEY, f"must be a JSON object; {KEPT_OLD}")]
    return [
        *_walk(config, RESOURCE_QOS_CONFIG, RESOURCE_QOS_KEY),
        *_cat_order_issues(config),
        *_profile_issues(config),
        *_overlap_issues(config, nodes),
        *cache_issues(config, nodes),
    ]


def _data_issues(data: Mapping[str, str]) -> Iterator[QoSIssue]:
    size = sum(len(k.encode()) + len(v.encode()) for k, v in data.items())
    if size > CONFIGMAP_MAX_BYTES:
        yield QoSIssue(ERROR, "data", f"{size} bytes: a ConfigMap holds at most 1 MiB")
    for key, text in data.items():
        if not CONFIGMAP_KEY.match(key) or len(key) > 253:
            yield QoSIssue(ERROR, key, "not a valid ConfigMap key (letters, digits, - _ .)")
        _value, problem = parse_json(text)
        if problem is not None:
            yield QoSIssue(
                ERROR,
                key,
                f"invalid JSON: {problem.message}; {KEPT_OLD}",
                line=problem.line,
                column=problem.column,
            )


def _walk(value: Any, schema: Schema, path: str) -> Iterator[QoSIssue]:
    if value is None:  # Go leaves the field unset
        return
    if isinstance(schema, Obj):
        yield from _walk_object(value, schema, path)
    elif isinstance(schema, ListOf):
        if not isinstance(value, list):
            yield QoSIssue(ERROR, path, f"expected a list, got {_json_type(value)}; {KEPT_OLD}")
            return
        for index, item in enumerate(value):
            yield from _walk(item, schema.item, f"{path}[{index}]")
    else:
        yield from _leaf_issues(value, schema, path)


def _walk_object(value: Any, schema: Obj, path: str) -> Iterator[QoSIssue]:
    if not isinstance(value, dict):
        yield QoSIssue(ERROR, path, f"expected an object, got {_json_type(value)}; {KEPT_OLD}")
        return
    folded = {known.casefold(): known for known in schema.fields}
    for key, item in value.items():
        child = f"{path}.{key}"
        if key in schema.fields:
            yield from _walk(item, schema.fields[key], child)
        elif key.casefold() in folded:
            right = folded[key.casefold()]
            yield QoSIssue(ERROR, child, _wrong_case(key, right, right in value))
            yield from _walk(item, schema.fields[right], child)
        else:
            close = difflib.get_close_matches(key, list(schema.fields), n=1, cutoff=0.75)
            hint = f"; did you mean `{close[0]}`?" if close else ""
            yield QoSIssue(WARNING, child, f"unknown key `{key}`: Koordinator ignores it{hint}")


def _wrong_case(key: str, right: str, both: bool) -> str:
    message = (
        f"`{key}` is spelled `{right}` in Koordinator: rename it. Go's JSON decoder "
        "matches keys ignoring case, so slo-controller may still read it, but exact "
        "readers (kubectl, this preview) ignore it"
    )
    if both:
        message += f"; with `{right}` also present, whichever comes last wins"
    return message


def _leaf_issues(value: Any, spec: FieldSpec, path: str) -> Iterator[QoSIssue]:
    wrong_type = _type_problem(value, spec)
    if wrong_type:
        yield QoSIssue(ERROR, path, f"{wrong_type}; {KEPT_OLD}")
        return
    if spec.kind != "int":
        return
    if (spec.low is not None and value < spec.low) or (spec.high is not None and value > spec.high):
        note = f" ({spec.note})" if spec.note else ""
        yield QoSIssue(ERROR, path, f"{spec.key} {value} is outside {spec.range_text}{note}")
    elif spec.key == "wmarkScalePermill" and value > 100:
        yield QoSIssue(
            WARNING,
            path,
            "Koordinator's ConfigMap webhook checks wmarkScalePermill as a percent and "
            "rejects values above 100",
        )


def _type_problem(value: Any, spec: FieldSpec) -> str:
    is_int = isinstance(value, int) and not isinstance(value, bool)
    ok = {
        "bool": isinstance(value, bool),
        "int": is_int,
        "float": is_int or isinstance(value, float),
        "str": isinstance(value, str),
        "intorstr": is_int or isinstance(value, str),
        "labels": isinstance(value, dict) and all(isinstance(v, str) for v in value.values()),
        "any": True,
    }[spec.kind]
    if ok:
        return ""
    wanted = _JSON_TYPES.get(spec.kind, "an integer or a string")
    if spec.kind == "labels":
        wanted = "an object of string values"
    return f"expected {wanted}, got {_json_type(value)}"


def _json_type(value: Any) -> str:
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float):
        return f"the number {value}"
    if isinstance(value, str):
        return f"the string {value!r}"
    return "a list" if isinstance(value, list) else "an object"


def _cat_order_issues(config: dict[str, Any]) -> Iterator[QoSIssue]:
    """start < end, checked on what each strategy ends up with after the merge."""
    for ref, body in strategies(config):
        node = None if ref.index == 0 else ref.index - 1
        effective = effective_resctrl(config, node)
        for qos_class in CLASS_KEYS:
            stated = stated_resctrl(body, qos_class)
            if stated is None or (stated.start is None and stated.end is None):
                continue
            cls = effective[qos_class]
            if not (0 <= cls.start <= 100 and 0 <= cls.end <= 100) or cls.start < cls.end:
                continue  # an out-of-range value is reported where it is stated
            inherited = [
                f"{key} from {'clusterStrategy or the defaults' if ref.index else 'the defaults'}"
                for key, own in (("start", stated.start), ("end", stated.end))
                if own is None
            ]
            note = f" ({', '.join(inherited)})" if inherited else ""
            yield QoSIssue(
                ERROR,
                f"{RESOURCE_QOS_KEY}.{ref.path}.{qos_class}.resctrlQOS",
                f"{cls.label}: catRangeStartPercent {cls.start} must be below "
                f"catRangeEndPercent {cls.end}{note}; koordlet writes no L3 schemata for it",
            )


def _profile_issues(config: dict[str, Any]) -> Iterator[QoSIssue]:
    """Names and selectors of node strategies, as Koordinator's webhook checks them."""
    found = strategies(config)[1:]
    counts = Counter(ref.name for ref, _body in found if ref.name)
    for ref, body in found:
        path = f"{RESOURCE_QOS_KEY}.{ref.path}"
        if not ref.name:
            yield QoSIssue(ERROR, f"{path}.name", "a node strategy needs a name (webhook rule)")
        elif counts[ref.name] > 1:
            yield QoSIssue(ERROR, f"{path}.name", f"name `{ref.name}` is used twice (webhook rule)")
        raw = body.get("nodeSelector")
        try:
            selector = parse_selector(raw)
        except SelectorError as exc:
            yield QoSIssue(
                ERROR, f"{path}.nodeSelector", f"{exc}; slo-controller skips this strategy"
            )
            continue
        if is_empty(selector):
            what = "missing: it matches no node" if raw is None else "empty: it matches every node"
            yield QoSIssue(
                ERROR,
                f"{path}.nodeSelector",
                f"nodeSelector is {what}, and Koordinator's webhook rejects it",
            )


def _overlap_issues(config: dict[str, Any], nodes: Sequence[NodeCache]) -> Iterator[QoSIssue]:
    """Node strategies selecting the same nodes: only the first applies to them."""
    selectors = node_selectors(config)
    by_index = {s.index: s for s in selectors}
    shared = shared_matches([(n.name, n.labels) for n in nodes], selectors)
    for indexes, names in sorted(shared.items()):
        labels = " and ".join(by_index[i].label for i in indexes)
        yield QoSIssue(
            ERROR,
            f"{RESOURCE_QOS_KEY}.nodeStrategies[{indexes[-1]}].nodeSelector",
            f"node strategies {labels} both select {len(names)} node(s); slo-controller gives "
            f"them the first, {by_index[indexes[0]].label}, and Koordinator's webhook rejects "
            "a ConfigMap where a node matches two",
            nodes=tuple(sorted(names)),
        )
    for indexes, example in sorted(virtual_overlaps(selectors).items()):
        if indexes in shared:
            continue
        labels = " and ".join(by_index[i].label for i in indexes)
        shown = ", ".join(f"{k}={v}" for k, v in sorted(example.items())) or "no labels"
        yield QoSIssue(
            ERROR,
            f"{RESOURCE_QOS_KEY}.nodeStrategies[{indexes[-1]}].nodeSelector",
            f"the selectors of {labels} overlap (a node labelled {shown} matches both); no "
            "mirrored node is selected by both, but Koordinator's webhook rejects the overlap",
        )
