"""The typed part of the editor: resctrlQOS, cpuQOS and memoryQOS fields per strategy × class.

A typed change touches exactly one key of one section of one class of one strategy;
everything else in the config, down to key order, is left as it was. Setting a key
that is absent appends it (creating the class and section objects if needed);
clearing one (None) removes that key only, and the objects around it stay.
"""

from __future__ import annotations

import copy
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from topology.editing.slo_config.schema import CLASS_KEYS, TYPED_SECTIONS, FieldSpec
from topology.editing.slo_config.strategies import StrategyRef, strategies

MISSING: Any = object()  # the key is absent (distinct from a JSON null)


@dataclass(frozen=True)
class FieldRef:
    """One typed field: strategy 0 is clusterStrategy, i ≥ 1 is nodeStrategies[i − 1]."""

    strategy: int
    qos_class: str
    section: str
    key: str

    @property
    def name(self) -> str:
        """The form field name; ConfigMap paths hold no `:`, so it splits back unambiguously."""
        return f"t:{self.strategy}:{self.qos_class}:{self.section}:{self.key}"

    @classmethod
    def from_name(cls, name: str) -> FieldRef:
        prefix, strategy, qos_class, section, key = name.split(":")
        if prefix != "t":
            raise ValueError(f"{name!r} is not a typed field name")
        return cls(int(strategy), qos_class, section, key)

    @property
    def spec(self) -> FieldSpec:
        return next(s for s in TYPED_SECTIONS[self.section] if s.key == self.key)


def typed_refs(config: Any) -> Iterator[tuple[StrategyRef, FieldRef]]:
    """Every typed field of every strategy in the config, strategy by strategy, class by class."""
    for ref, _body in strategies(config):
        for qos_class in CLASS_KEYS:
            for section, specs in TYPED_SECTIONS.items():
                for spec in specs:
                    yield ref, FieldRef(ref.index, qos_class, section, spec.key)


def _strategy_body(config: Any, index: int) -> Any:
    if not isinstance(config, dict):
        return None
    if index == 0:
        return config.get("clusterStrategy")
    items = config.get("nodeStrategies")
    if isinstance(items, list) and index - 1 < len(items):
        return items[index - 1]
    return None


def typed_value(config: Any, ref: FieldRef) -> Any:
    """The field's value as stated (any JSON type), or MISSING."""
    node = _strategy_body(config, ref.strategy)
    for key in (ref.qos_class, ref.section):
        node = node.get(key) if isinstance(node, dict) else None
    if not isinstance(node, dict) or ref.key not in node:
        return MISSING
    return node[ref.key]


def fits(spec: FieldSpec, value: Any) -> bool:
    """Whether a stated value can be shown in a typed input (else it is edited as raw JSON)."""
    if value is MISSING or value is None:
        return True
    if spec.kind == "bool":
        return isinstance(value, bool)
    return isinstance(value, int) and not isinstance(value, bool)


class TypedChangeError(ValueError):
    """A typed change that cannot be placed: its strategy or an object on the way is missing."""


def apply_typed_changes(config: Any, changes: Mapping[FieldRef, Any]) -> Any:
    """A copy of the config with each field set (or removed, for None)."""
    result = copy.deepcopy(config)
    for ref, value in changes.items():
        _apply(result, ref, value)
    return result


def _apply(config: Any, ref: FieldRef, value: Any) -> None:
    if not isinstance(config, dict):
        raise TypedChangeError("resource-qos-config is not a JSON object")
    strategy = _strategy_body(config, ref.strategy)
    if strategy is None and ref.strategy == 0 and value is not None:
        strategy = config.setdefault("clusterStrategy", {})
    if strategy is None:
        if value is None:
            return
        raise TypedChangeError(f"strategy {ref.strategy} does not exist in the config")
    section = _child(
        _child(strategy, ref.qos_class, create=value is not None),
        ref.section,
        create=value is not None,
    )
    if section is None:
        return
    if value is None:
        section.pop(ref.key, None)
    else:
        section[ref.key] = value


def _child(parent: Any, key: str, *, create: bool) -> dict[str, Any] | None:
    if parent is None:
        return None
    if not isinstance(parent, dict):
        raise TypedChangeError(f"cannot set a field inside {key!r}: its parent is not an object")
    child = parent.get(key)
    if child is None and create:
        child = parent[key] = {}
    if child is not None and not isinstance(child, dict):
        raise TypedChangeError(f"{key} is not a JSON object; fix it in the raw JSON first")
    return child
