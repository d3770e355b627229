"""Node strategies' `nodeSelector`s: parsed as Kubernetes does, matched, and checked for overlap.

Semantics follow `metav1.LabelSelectorAsSelector`: a null selector matches no node,
an empty one every node; a malformed one is an error, on which slo-controller logs
and skips the strategy. Koordinator's ConfigMap webhook additionally rejects node
strategies without a name, with a duplicate name, with an empty selector, or whose
selectors overlap, both on the cluster's real nodes and on "virtual" nodes built
from the selectors themselves (`generateNodesByNodeSelector`), reproduced here.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from scheduler_api.engine import LabelRequirement, LabelSelector, match_selector

_NAME = r"[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?"
_QUALIFIED_KEY = re.compile(
    rf"^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?{_NAME}$"
)
_LABEL_VALUE = re.compile(rf"^({_NAME})?$")
_OPERATORS_WITH_VALUES = ("In", "NotIn")
_OPERATORS_WITHOUT_VALUES = ("Exists", "DoesNotExist")


class SelectorError(ValueError):
    """A selector LabelSelectorAsSelector would refuse."""


@dataclass(frozen=True)
class NodeStrategySelector:
    """One node strategy as far as matching goes; `selector` None: it matches no node."""

    index: int  # position in nodeStrategies
    name: str
    selector: LabelSelector | None

    @property
    def label(self) -> str:
        return f"`{self.name}`" if self.name else f"nodeStrategies[{self.index}]"

    def matches(self, labels: Mapping[str, str]) -> bool:
        return self.selector is not None and match_selector(labels, self.selector)


def parse_selector(raw: Any) -> LabelSelector | None:
    """A nodeSelector → LabelSelector; None for a null selector; SelectorError when malformed."""
    if raw is None:
        return None
    if not isinstance(raw, dict):
        raise SelectorError("nodeSelector must be an object")
    labels = raw.get("matchLabels") or {}
    if not isinstance(labels, dict):
        raise SelectorError("matchLabels must be an object of label → value")
    for key, value in labels.items():
        _check_key(key)
        if not isinstance(value, str) or not _valid_value(value):
            raise SelectorError(f"matchLabels[{key}]: {value!r} is not a valid label value")
    expressions = raw.get("matchExpressions") or []
    if not isinstance(expressions, list):
        raise SelectorError("matchExpressions must be a list")
    return LabelSelector(dict(labels), tuple(_requirement(e) for e in expressions))


def _requirement(raw: Any) -> LabelRequirement:
    if not isinstance(raw, dict):
        raise SelectorError("each matchExpressions entry must be an object")
    key, operator, values = _check_key(raw.get("key")), raw.get("operator"), raw.get("values") or []
    if not isinstance(values, list) or not all(isinstance(v, str) for v in values):
        raise SelectorError(f"{key}: values must be a list of strings")
    if operator in _OPERATORS_WITH_VALUES and not values:
        raise SelectorError(f"{key}: operator {operator} needs at least one value")
    if operator in _OPERATORS_WITHOUT_VALUES and values:
        raise SelectorError(f"{key}: operator {operator} takes no values")
    if operator not in (*_OPERATORS_WITH_VALUES, *_OPERATORS_WITHOUT_VALUES):
        raise SelectorError(
            f"{key}: {operator!r} is not a selector operator (In, NotIn, Exists, DoesNotExist)"
        )
    for value in values:
        if not _valid_value(value):
            raise SelectorError(f"{key}: {value!r} is not a valid label value")
    return LabelRequirement(key, operator, tuple(values))


def _check_key(key: Any) -> str:
    if not isinstance(key, str) or not _QUALIFIED_KEY.match(key) or len(key.split("/")[-1]) > 63:
        raise SelectorError(f"{key!r} is not a valid label key")
    return key


def _valid_value(value: str) -> bool:
    return len(value) <= 63 and bool(_LABEL_VALUE.match(value))


def is_empty(selector: LabelSelector | None) -> bool:
    return selector is None or (not selector.match_labels and not selector.match_expressions)


def first_match(
    labels: Mapping[str, str], strategies: Sequence[NodeStrategySelector]
) -> int | None:
    """Index of the node strategy slo-controller gives this node: the first that matches."""
    for strategy in strategies:
        if strategy.matches(labels):
            return strategy.index
    return None


def virtual_nodes(selector: LabelSelector | None) -> list[dict[str, str]]:
    """Label sets Koordinator's webhook derives from a selector to detect overlap.

    Its `generateNodesByNodeSelector`: as many nodes as the product of the value
    counts of the expressions that list values; every node carries matchLabels, and
    node i takes value i mod n of each such expression (a walk, not a full product).
    """
    if selector is None:
        return []
    count = 1
    for requirement in selector.match_expressions:
        count *= len(requirement.values) or 1
    nodes = [dict(selector.match_labels) for _ in range(count)]
    for requirement in selector.match_expressions:
        if requirement.values:
            for index, labels in enumerate(nodes):
                labels[requirement.key] = requirement.values[index % len(requirement.values)]
    return nodes


def shared_matches(
    nodes: Sequence[tuple[str, Mapping[str, str]]], strategies: Sequence[NodeStrategySelector]
) -> dict[tuple[int, ...], list[str]]:
    """Real nodes that two or more node strategies select, keyed by those strategies."""
    shared: dict[tuple[int, ...], list[str]] = {}
    for name, labels in nodes:
        matching = tuple(s.index for s in strategies if s.matches(labels))
        if len(matching) > 1:
            shared.setdefault(matching, []).append(name)
    return shared


def virtual_overlaps(
    strategies: Sequence[NodeStrategySelector],
) -> dict[tuple[int, ...], dict[str, str]]:
    """Strategies whose selectors the webhook finds overlapping, with one example label set."""
    found: dict[tuple[int, ...], dict[str, str]] = {}
    for strategy in strategies:
        for labels in virtual_nodes(strategy.selector):
            matching = tuple(s.index for s in strategies if s.matches(labels))
            if len(matching) > 1:
                found.setdefault(matching, labels)
    return found
