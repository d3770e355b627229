"""The keys Koordinator reads in `resource-qos-config`, with their JSON types and ranges.

Taken from upstream Koordinator, not from formats.md where the two differ:
`apis/configuration/slo_controller_config.go` (ResourceQOSCfg, NodeCfgProfile),
`apis/slo/v1alpha1/nodeslo_types.go` (ResourceQOSStrategy, ResourceQOS, CPUQOS,
MemoryQOS, ResctrlQOS, BlkIOQOS, NetworkQOS) and the ranges its validate tags and
ConfigMap webhook (`pkg/webhook/cm/plugins/sloconfig`) enforce. Notably memoryQOS
has flat `pageCacheLimitEnable` / `pageCacheLimitSync` / `pageCacheLimitSize`
int fields, not a `pageCache` object.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from topology.editing.slo_config.json_text import ordered

LeafKind = Literal["bool", "int", "float", "str", "intorstr", "labels", "any"]


@dataclass(frozen=True)
class FieldSpec:
    """A scalar Koordinator field; low/high bound an int (inclusive), None: unbounded."""

    key: str
    kind: LeafKind
    low: int | None = None
    high: int | None = None
    note: str = ""

    @property
    def range_text(self) -> str:
        if self.low is None and self.high is None:
            return ""
        if self.high is None:
            return f"≥ {self.low}"
        return f"{self.low}–{self.high}"


@dataclass(frozen=True)
class Obj:
    fields: Mapping[str, Schema]


@dataclass(frozen=True)
class ListOf:
    item: Schema


Schema = FieldSpec | Obj | ListOf


def _obj(*specs: FieldSpec, **nested: Schema) -> Obj:
    return Obj({**{spec.key: spec for spec in specs}, **nested})


def _bool(key: str) -> FieldSpec:
    return FieldSpec(key, "bool")


def _percent(key: str) -> FieldSpec:
    return FieldSpec(key, "int", 0, 100)


def _flag(key: str) -> FieldSpec:
    return FieldSpec(key, "int", 0, 1)


RESCTRL_FIELDS = (
    _bool("enable"),
    FieldSpec("catRangeStartPercent", "int", 0, 100, "below the end"),
    FieldSpec("catRangeEndPercent", "int", 0, 100, "above the start"),
    FieldSpec("mbaPercent", "int", 1, 100, "outside 1–100 koordlet writes no MB line"),
)
CPU_QOS_FIELDS = (
    _bool("enable"),
    FieldSpec("groupIdentity", "int", -1, 2, "with cpuPolicy groupIdentity"),
    FieldSpec("schedIdle", "int", 0, 1, "with cpuPolicy coreSched"),
    _bool("coreExpeller"),
)
MEMORY_QOS_FIELDS = (
    _bool("enable"),
    _percent("minLimitPercent"),
    _percent("lowLimitPercent"),
    _percent("throttlingPercent"),
    _percent("wmarkRatio"),
    FieldSpec("wmarkScalePermill", "int", 1, 1000),
    FieldSpec("wmarkMinAdj", "int", -25, 50),
    _flag("priorityEnable"),
    FieldSpec("priority", "int", 0, 12),
    _flag("oomKillGroup"),
    _flag("pageCacheLimitEnable"),
    _flag("pageCacheLimitSync"),
    FieldSpec("pageCacheLimitSize", "int", 0, None, "bytes"),
)
# The sections the editor types, per class; everything else is edited as raw JSON.
TYPED_SECTIONS: Mapping[str, tuple[FieldSpec, ...]] = {
    "resctrlQOS": RESCTRL_FIELDS,
    "cpuQOS": CPU_QOS_FIELDS,
    "memoryQOS": MEMORY_QOS_FIELDS,
}
SECTION_ORDER = ("cpuQOS", "memoryQOS", "blkioQOS", "resctrlQOS", "networkQOS")
CLASS_KEYS = ("lsrClass", "lsClass", "beClass", "systemClass")
STRATEGY_ORDER = ("name", "nodeSelector", "policies", *CLASS_KEYS, "cgroupRoot")

_IO_CFG = _obj(
    *(FieldSpec(k, "int", 0) for k in ("readIOPS", "writeIOPS", "readBPS", "writeBPS")),
    FieldSpec("ioWeightPercent", "int", 1, 100),
    FieldSpec("readLatency", "int"),
    FieldSpec("writeLatency", "int"),
    _percent("readLatencyPercent"),
    _percent("writeLatencyPercent"),
    _bool("enableUserModel"),
    *(
        FieldSpec(f"model{k}", "int", 1)
        for k in ("ReadBPS", "WriteBPS", "ReadSeqIOPS", "WriteSeqIOPS", "ReadRandIOPS")
    ),
    FieldSpec("modelWriteRandIOPS", "int", 1),
)
_BLKIO = _obj(
    _bool("enable"),
    blocks=ListOf(_obj(FieldSpec("name", "str"), FieldSpec("type", "str"), ioCfg=_IO_CFG)),
)
_NETWORK = _obj(
    _bool("enable"),
    *(
        FieldSpec(k, "intorstr")
        for k in ("ingressRequest", "ingressLimit", "egressRequest", "egressLimit")
    ),
)
RESOURCE_QOS = _obj(
    cpuQOS=_obj(*CPU_QOS_FIELDS),
    memoryQOS=_obj(*MEMORY_QOS_FIELDS),
    blkioQOS=_BLKIO,
    resctrlQOS=_obj(*RESCTRL_FIELDS),
    networkQOS=_NETWORK,
)
_STRATEGY_FIELDS: dict[str, Schema] = {
    "policies": _obj(FieldSpec("cpuPolicy", "str"), FieldSpec("netQOSPolicy", "str")),
    **{key: RESOURCE_QOS for key in (*CLASS_KEYS, "cgroupRoot")},
}
LABEL_SELECTOR = _obj(
    FieldSpec("matchLabels", "labels"),
    matchExpressions=ListOf(
        _obj(
            FieldSpec("key", "str"),
            FieldSpec("operator", "str"),
            values=ListOf(FieldSpec("value", "str")),
        )
    ),
)
CLUSTER_STRATEGY = Obj(_STRATEGY_FIELDS)
NODE_STRATEGY = Obj(
    {"name": FieldSpec("name", "str"), "nodeSelector": LABEL_SELECTOR, **_STRATEGY_FIELDS}
)
RESOURCE_QOS_CONFIG = Obj(
    {"clusterStrategy": CLUSTER_STRATEGY, "nodeStrategies": ListOf(NODE_STRATEGY)}
)


@dataclass(frozen=True)
class KeyOrder:
    """Koordinator's own field order, used when Topolens rebuilds a config from the mirror."""

    top: tuple[str, ...] = ("clusterStrategy", "nodeStrategies")
    strategy: tuple[str, ...] = STRATEGY_ORDER
    section: tuple[str, ...] = SECTION_ORDER
    fields: Mapping[str, tuple[str, ...]] = field(
        default_factory=lambda: {
            s: tuple(f.key for f in specs) for s, specs in TYPED_SECTIONS.items()
        }
    )


def canonical_order(config: dict[str, Any], order: KeyOrder | None = None) -> dict[str, Any]:
    """The config with known keys in Koordinator's struct order; unknown keys follow theirs.

    The mirror keeps strategies in PostgreSQL jsonb, which does not keep key order,
    so a config rebuilt from it is put back in the order a person would write it.
    """
    order = order or KeyOrder()
    result = ordered(config, order.top)
    if isinstance(result.get("clusterStrategy"), dict):
        result["clusterStrategy"] = _strategy_order(result["clusterStrategy"], order)
    if isinstance(result.get("nodeStrategies"), list):
        result["nodeStrategies"] = [
            _strategy_order(item, order) if isinstance(item, dict) else item
            for item in result["nodeStrategies"]
        ]
    return result


def _strategy_order(strategy: dict[str, Any], order: KeyOrder) -> dict[str, Any]:
    result = ordered(strategy, order.strategy)
    for key in (*CLASS_KEYS, "cgroupRoot"):
        if isinstance(result.get(key), dict):
            sections = ordered(result[key], order.section)
            for name, keys in order.fields.items():
                if isinstance(sections.get(name), dict):
                    sections[name] = ordered(sections[name], keys)
            result[key] = sections
    return result
