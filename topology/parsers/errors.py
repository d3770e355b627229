"""The one error every parser raises: it names the object and the field at fault."""

from __future__ import annotations


class ObjectParseError(ValueError):
    """A Kubernetes object that cannot be mirrored as it is."""

    def __init__(self, kind: str, name: str, field: str, message: str) -> None:
        self.kind = kind
        self.name = name
        self.field = field
        self.message = message
        super().__init__(f"{kind} {name or '<unnamed>'}: {field}: {message}")


class FieldError(ValueError):
    """A value that is wrong on its own; the caller adds the object and field."""
