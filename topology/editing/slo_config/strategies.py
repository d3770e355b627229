"""Reading strategies out of a parsed `resource-qos-config`, tolerating any shape.

The draft is whatever an admin typed, so nothing here assumes the right types: a
value of the wrong type reads as "not stated", and validation reports it apart.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from topology.choices import ResctrlClass
from topology.domain.resctrl import EffectiveClass, ResctrlValues, effective_class
from topology.editing.slo_config.node_selectors import (
    NodeStrategySelector,
    SelectorError,
    parse_selector,
)

RESOURCE_QOS_KEY = "resource-qos-config"
CLUSTER_PATH = "clusterStrategy"


@dataclass(frozen=True)
class StrategyRef:
    """Where a strategy sits: index 0 is clusterStrategy, i ≥ 1 is nodeStrategies[i − 1]."""

    index: int
    name: str

    @property
    def path(self) -> str:
        return CLUSTER_PATH if self.index == 0 else f"nodeStrategies[{self.index - 1}]"

    @property
    def label(self) -> str:
        if self.index == 0:
            return CLUSTER_PATH
        return f"{self.path} `{self.name}`" if self.name else self.path


def as_dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def strategies(config: Any) -> list[tuple[StrategyRef, dict[str, Any]]]:
    """The cluster strategy then each node strategy, as (where, body) pairs."""
    config = as_dict(config)
    found = [(StrategyRef(0, ""), as_dict(config.get("clusterStrategy")))]
    node_list = config.get("nodeStrategies")
    for position, item in enumerate(node_list if isinstance(node_list, list) else []):
        body = as_dict(item)
        name = body.get("name")
        found.append((StrategyRef(position + 1, name if isinstance(name, str) else ""), body))
    return found


def node_selectors(config: Any) -> list[NodeStrategySelector]:
    """Node strategies as slo-controller matches them; a malformed selector matches nothing."""
    result = []
    for ref, body in strategies(config)[1:]:
        try:
            selector = parse_selector(body.get("nodeSelector"))
        except SelectorError:
            selector = None
        result.append(NodeStrategySelector(ref.index - 1, ref.name, selector))
    return result


def _int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def stated_resctrl(strategy: Mapping[str, Any], qos_class: str) -> ResctrlValues | None:
    """A class's resctrlQOS as the strategy states it (canonical keys only)."""
    section = as_dict(strategy.get(qos_class)).get("resctrlQOS")
    if not isinstance(section, dict):
        return None
    enable = section.get("enable")
    return ResctrlValues(
        enable if isinstance(enable, bool) else None,
        _int(section.get("catRangeStartPercent")),
        _int(section.get("catRangeEndPercent")),
        _int(section.get("mbaPercent")),
    )


def effective_resctrl(config: Any, node_strategy: int | None) -> dict[str, EffectiveClass]:
    """Defaults ← clusterStrategy ← the node strategy (index into nodeStrategies), per class.

    This is slo-controller's merge (`calculateResourceQOSCfgMerged`): a node strategy
    is laid over the merged cluster strategy, a stated value overriding.
    """
    found = strategies(config)
    layers: list[tuple[str, Mapping[str, Any]]] = [(CLUSTER_PATH, found[0][1])]
    if node_strategy is not None and node_strategy + 1 < len(found):
        ref, body = found[node_strategy + 1]
        layers.append((ref.path, body))
    return {
        qos_class: effective_class(
            qos_class, [(name, stated_resctrl(body, qos_class)) for name, body in layers]
        )
        for qos_class in ResctrlClass.values
    }


def stating_layer(
    config: Any, node_strategy: int | None, qos_class: str, keys: Sequence[str]
) -> StrategyRef:
    """The layer a node's value for these keys comes from: its node strategy if it states one."""
    found = strategies(config)
    if node_strategy is not None and node_strategy + 1 < len(found):
        ref, body = found[node_strategy + 1]
        section = as_dict(as_dict(body.get(qos_class)).get("resctrlQOS"))
        if any(section.get(key) is not None for key in keys):
            return ref
    return found[0][0]
