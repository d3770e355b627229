"""A bound on how deeply a user's document nests: Kubernetes objects stay within a few
dozen levels, while a document nested thousands deep exhausts Python's recursion (in the
decoders, deep copies and validation alike) and would end as a server error."""

from __future__ import annotations

from typing import Any

MAX_NESTING = 100


class TooDeep(ValueError):
    def __init__(self, limit: int) -> None:
        super().__init__(f"nested more than {limit} levels deep")


class NulCharacter(ValueError):
    """A NUL character, which no Kubernetes name or value holds and PostgreSQL refuses."""

    def __init__(self) -> None:
        super().__init__("contains a NUL character (\\u0000)")


def check_nesting(document: Any, limit: int = MAX_NESTING, *, refuse_nul: bool = False) -> None:
    """Raise TooDeep when lists and maps in `document` nest deeper than `limit`, and with
    `refuse_nul` NulCharacter when a key or string holds a NUL (iteratively: it never
    recurses)."""
    stack: list[tuple[Any, int]] = [(document, 0)]
    while stack:
        node, depth = stack.pop()
        if isinstance(node, dict):
            children: Any = node.values()
            if refuse_nul and any(isinstance(key, str) and "\x00" in key for key in node):
                raise NulCharacter()
        elif isinstance(node, list):
            children = node
        else:
            if refuse_nul and isinstance(node, str) and "\x00" in node:
                raise NulCharacter()
            continue
        if depth >= limit:
            raise TooDeep(limit)
        stack.extend((child, depth + 1) for child in children)
