"""Read `kubectl get -o json` output (a List or one object) or multi-document YAML."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import yaml

from topology.parsers.nesting import MAX_NESTING, TooDeep, check_nesting
from topology.parsers.yaml_documents import load_all


class LoadError(ValueError):
    """A file that is not Kubernetes JSON or YAML."""


def load_objects(path: Path) -> list[dict[str, Any]]:
    try:
        text = path.read_text()
    except OSError as exc:
        raise LoadError(f"{path}: cannot read: {exc.strerror}") from None
    return parse_documents(text, source=str(path))


def parse_documents(text: str, *, source: str = "<input>") -> list[dict[str, Any]]:
    documents = _decode(text, source)
    objects: list[dict[str, Any]] = []
    for document in documents:
        if document is None:
            continue
        objects.extend(flatten(document, source))
    return objects


def _decode(text: str, source: str) -> list[Any]:
    stripped = text.lstrip()
    if stripped.startswith(("{", "[")):
        try:
            document = json.loads(text)
            check_nesting(document)
        except json.JSONDecodeError as exc:
            raise LoadError(
                f"{source}: invalid JSON at line {exc.lineno} column {exc.colno}: {exc.msg}"
            ) from None
        except (RecursionError, TooDeep):
            raise LoadError(f"{source}: {TooDeep(MAX_NESTING)}") from None
        return [document]
    try:
        return load_all(text)
    except yaml.YAMLError as exc:
        raise LoadError(f"{source}: invalid YAML: {exc}") from None


def flatten(document: Any, source: str) -> list[dict[str, Any]]:
    """A List (kind v1 List, or any *List) becomes its items; a bare array too."""
    if isinstance(document, list):
        return [item for entry in document for item in flatten(entry, source)]
    if not isinstance(document, dict):
        raise LoadError(f"{source}: expected Kubernetes objects, found {type(document).__name__}")
    kind = document.get("kind")
    if isinstance(kind, str) and kind.endswith("List") and "items" in document:
        items = document.get("items") or []
        if not isinstance(items, list):
            raise LoadError(f"{source}: {kind}.items is not a list")
        return [item for entry in items for item in flatten(entry, source)]
    return [document]
