"""Field selectors as the API server applies them to lists and watches."""

from __future__ import annotations

from typing import Any

SUPPORTED = {
    "metadata.name",
    "metadata.namespace",
    "status.phase",  # pods
    "spec.nodeName",  # pods
    "involvedObject.kind",  # events
    "type",  # events
}


class BadSelector(ValueError):
    pass


def parse(text: str) -> list[tuple[str, str, str]]:
    """`a=b,c!=d` → [(field, op, value)]; an unsupported field is a 400, as in Kubernetes."""
    terms = []
    for term in filter(None, (t.strip() for t in text.split(","))):
        for op in ("!=", "==", "="):
            if op in term:
                name, value = term.split(op, 1)
                if name not in SUPPORTED:
                    raise BadSelector(f'field label not supported: "{name}"')
                terms.append((name, "!=" if op == "!=" else "=", value))
                break
        else:
            raise BadSelector(f"invalid selector: {term!r}")
    return terms


def matches(obj: dict[str, Any] | None, terms: list[tuple[str, str, str]]) -> bool:
    if obj is None:
        return False
    for name, op, value in terms:
        actual: Any = obj
        for part in name.split("."):
            actual = actual.get(part, "") if isinstance(actual, dict) else ""
        if (str(actual) == value) != (op == "="):
            return False
    return True
