"""The `slo-controller-config` ConfigMap → QoSConfigRecord (formats.md §4).

`resctrlQOS` is typed per class; everything else in every strategy is kept
verbatim so that writing the ConfigMap back loses nothing.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from topology.choices import ResctrlClass
from topology.parsers.fields import Reader

NAMESPACE = "koordinator-system"
NAME = "slo-controller-config"
RESOURCE_QOS_KEY = "resource-qos-config"
_RESCTRL_FIELDS = {
    "enable": ("enable", bool),
    "catRangeStartPercent": ("cat_range_start_percent", int),
    "catRangeEndPercent": ("cat_range_end_percent", int),
    "mbaPercent": ("mba_percent", int),
}


@dataclass(frozen=True)
class ResctrlRecord:
    qos_class: str
    enable: bool | None = None
    cat_range_start_percent: int | None = None
    cat_range_end_percent: int | None = None
    mba_percent: int | None = None
    extra: dict[str, Any] = field(default_factory=dict)  # keys Topolens doesn't model


@dataclass(frozen=True)
class StrategyRecord:
    """position 0 is the cluster strategy; node strategies follow in order."""

    position: int
    name: str
    node_selector: dict[str, Any] | None
    body: dict[str, Any]  # the strategy verbatim, minus each class's resctrlQOS
    resctrl: tuple[ResctrlRecord, ...]


@dataclass(frozen=True)
class QoSConfigRecord:
    namespace: str
    name: str
    uid: str
    resource_version: str
    data: dict[str, str]  # every other data key, verbatim
    strategies: tuple[StrategyRecord, ...]


def is_qos_configmap(obj: Any) -> bool:
    metadata = obj.get("metadata") if isinstance(obj, dict) else None
    return (
        isinstance(metadata, dict)
        and metadata.get("name") == NAME
        and metadata.get("namespace") == NAMESPACE
    )


def parse_qos_configmap(obj: Any) -> QoSConfigRecord:
    reader = Reader(obj, "ConfigMap")
    data = reader.string_map("data")
    path = f"data[{RESOURCE_QOS_KEY}]"
    config = reader.json_field(path, data.get(RESOURCE_QOS_KEY) or "{}") or {}
    reader.check(path, config, dict)
    strategies = [
        _strategy(reader, f"{path}.clusterStrategy", 0, config.get("clusterStrategy") or {})
    ]
    nodes = reader.check(f"{path}.nodeStrategies", config.get("nodeStrategies") or [], list)
    for index, item in enumerate(nodes):
        strategies.append(_strategy(reader, f"{path}.nodeStrategies[{index}]", index + 1, item))
    return QoSConfigRecord(
        namespace=reader.get("metadata.namespace", str),
        name=reader.get("metadata.name", str),
        uid=reader.get("metadata.uid", str, default=""),
        resource_version=reader.get("metadata.resourceVersion", str, default=""),
        data={k: v for k, v in data.items() if k != RESOURCE_QOS_KEY},
        strategies=tuple(strategies),
    )


def _strategy(reader: Reader, path: str, position: int, item: Any) -> StrategyRecord:
    body = json.loads(json.dumps(reader.check(path, item, dict)))  # a private deep copy
    resctrl = []
    for qos_class in ResctrlClass.values:
        cls = body.get(qos_class)
        if cls is None:
            continue
        reader.check(f"{path}.{qos_class}", cls, dict)
        if "resctrlQOS" in cls:
            resctrl.append(
                _resctrl(reader, f"{path}.{qos_class}.resctrlQOS", qos_class, cls.pop("resctrlQOS"))
            )
    selector = body.pop("nodeSelector", None) if position else None
    name = body.pop("name", "") if position else ""
    if position and selector is not None:
        reader.check(f"{path}.nodeSelector", selector, dict)
    return StrategyRecord(position, str(name or ""), selector, body, tuple(resctrl))


def _resctrl(reader: Reader, path: str, qos_class: str, data: Any) -> ResctrlRecord:
    reader.check(path, data, dict)
    values: dict[str, Any] = {}
    extra: dict[str, Any] = {}
    for key, value in data.items():
        if key not in _RESCTRL_FIELDS:
            extra[key] = value
            continue
        attribute, typ = _RESCTRL_FIELDS[key]
        if value is not None:
            reader.check(f"{path}.{key}", value, typ)
        values[attribute] = value
    return ResctrlRecord(qos_class=qos_class, extra=extra, **values)


def render_resctrl(record: ResctrlRecord) -> dict[str, Any]:
    """The resctrlQOS JSON for a class, keys in Koordinator's order, unknown keys kept."""
    result: dict[str, Any] = {}
    for key, (attribute, _typ) in _RESCTRL_FIELDS.items():
        value = getattr(record, attribute)
        if value is not None:
            result[key] = value
    result.update(record.extra)
    return result
