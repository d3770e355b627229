"""A bound on how deeply a user's document nests: Kubernetes objects stay within a few
dozen levels, while a document nested thousands deep exhausts Python's recursion (in the
decoders, deep copies and validation alike) and would end as a server error."""

from __future__ import annotations

from typing import Any

MAX_NESTING = 100


class TooDeep(ValueError):
    def __init__(self, limit: int) -> None:
        super().__init__(f"nested more than {limit} levels deep")


def check_nesting(document: Any, limit: int = MAX_NESTING) -> None:
    """Raise TooDeep when lists and maps in `document` nest deeper than `limit`
    (iteratively: it never recurses itself)."""
    stack: list[tuple[Any, int]] = [(document, 0)]
    while stack:
        node, depth = stack.pop()
        if isinstance(node, dict):
            children = node.values()
        elif isinstance(node, list):
            children = node
        else:
            continue
        if depth >= limit:
            raise TooDeep(limit)
        stack.extend((child, depth + 1) for child in children)
