"""YAML from users, read safely: no Python objects, and no aliases.

A YAML alias repeats a node already read; nested aliases ("billion laughs") make a few
hundred characters expand into gigabytes. Kubernetes objects never need them (kubectl
writes none), so every YAML Topolens reads from a user (pasted manifests, uploaded
scheduler configurations, imported dumps) is read by `load_all`, which refuses them.
"""

from __future__ import annotations

from typing import Any

import yaml

from topology.parsers.nesting import MAX_NESTING, TooDeep, check_nesting


class AliasRefused(yaml.YAMLError):
    """The text uses a YAML alias (`*name`), which is not accepted."""

    problem = "YAML aliases (*name) are not accepted"

    def __init__(self, mark: Any) -> None:
        self.problem_mark = mark
        where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark else ""
        super().__init__(f"{self.problem}{where}")


class NoAliasLoader(yaml.SafeLoader):
    """SafeLoader that refuses aliases before composing them."""

    def compose_node(self, parent: Any, index: Any) -> Any:
        if self.check_event(yaml.AliasEvent):
            raise AliasRefused(self.peek_event().start_mark)
        return super().compose_node(parent, index)


class NestedTooDeep(yaml.YAMLError):
    problem = f"nested more than {MAX_NESTING} levels deep"
    problem_mark = None


def load_all(text: str) -> list[Any]:
    """Every document of `text`; yaml.YAMLError (AliasRefused for an alias,
    NestedTooDeep past MAX_NESTING levels) when bad."""
    try:
        documents = list(yaml.load_all(text, Loader=NoAliasLoader))
        check_nesting(documents, MAX_NESTING + 1)
    except (RecursionError, TooDeep):
        raise NestedTooDeep(NestedTooDeep.problem) from None
    return documents
