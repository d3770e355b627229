"""Label selectors written as kubectl takes them, for bulk edits of node policies (pure).

`parse_selector("zone=a,tier in (db, cache),!spot")` follows Kubernetes'
`labels.Parse`: comma-separated requirements, each `key`, `!key`, `key=value`,
`key==value`, `key!=value`, `key in (v1,v2)` or `key notin (v1,v2)`. The result is
the engine's LabelSelector, matched with the engine's `match_selector`.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from scheduler_api.engine import LabelRequirement, LabelSelector, match_selector

__all__ = ["SelectorError", "parse_selector", "selector_matches"]

_NAME = r"[A-Za-z0-9](?:[-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?"
_PREFIX = r"[a-z0-9](?:[-a-z0-9.]{0,251}[a-z0-9])?"
_KEY = rf"(?:{_PREFIX}/)?{_NAME}"
_VALUE = rf"(?:{_NAME})?"
_KEY_RE = re.compile(rf"^{_KEY}$")
_VALUE_RE = re.compile(rf"^{_VALUE}$")
_EXISTS = re.compile(r"^(?P<not>!)?\s*(?P<key>\S+)$")
_EQUALITY = re.compile(r"^(?P<key>[^=!\s]+)\s*(?P<op>==|=|!=)\s*(?P<value>\S*)$")
_SET = re.compile(r"^(?P<key>\S+)\s+(?P<op>in|notin)\s*\((?P<values>[^()]*)\)$")


class SelectorError(ValueError):
    """A selector that cannot be parsed; the message says which part and why."""


def _terms(text: str) -> list[str]:
    """Split on the commas that are not inside a value list's parentheses."""
    terms: list[str] = []
    current: list[str] = []
    depth = 0
    for char in text:
        if char == "(":
            depth += 1
        elif char == ")":
            depth -= 1
            if depth < 0:
                raise SelectorError(f"{text!r} has a ')' without its '('")
        if char == "," and depth == 0:
            terms.append("".join(current).strip())
            current = []
        else:
            current.append(char)
    if depth:
        raise SelectorError(f"{text!r} has a '(' without its ')'")
    terms.append("".join(current).strip())
    return terms


def _checked_key(key: str, term: str) -> str:
    if not _KEY_RE.match(key):
        raise SelectorError(f"{key!r} in {term!r} is not a valid label key")
    return key


def _checked_value(value: str, term: str) -> str:
    if not _VALUE_RE.match(value):
        raise SelectorError(f"{value!r} in {term!r} is not a valid label value")
    return value


def _requirement(term: str) -> LabelRequirement:
    if match := _SET.match(term):
        values = [v.strip() for v in match["values"].split(",")]
        if not any(values):
            raise SelectorError(f"{term!r} lists no values")
        operator = "In" if match["op"] == "in" else "NotIn"
        checked = tuple(_checked_value(v, term) for v in values)
        return LabelRequirement(_checked_key(match["key"], term), operator, checked)
    if match := _EQUALITY.match(term):
        operator = "NotIn" if match["op"] == "!=" else "In"
        value = _checked_value(match["value"], term)
        return LabelRequirement(_checked_key(match["key"], term), operator, (value,))
    if match := _EXISTS.match(term):
        operator = "DoesNotExist" if match["not"] else "Exists"
        return LabelRequirement(_checked_key(match["key"], term), operator)
    raise SelectorError(
        f"{term!r} is not a requirement (key, !key, key=value, key!=value, "
        "key in (a,b) or key notin (a,b))"
    )


def parse_selector(text: str) -> LabelSelector:
    """The selector of `text`; an empty text selects every node."""
    if not text.strip():
        return LabelSelector()
    terms = _terms(text)
    if any(not term for term in terms):
        raise SelectorError(f"{text!r} has an empty requirement (a stray comma?)")
    return LabelSelector(match_expressions=tuple(_requirement(term) for term in terms))


def selector_matches(selector: LabelSelector, labels: Mapping[str, str]) -> bool:
    return match_selector(labels, selector)
