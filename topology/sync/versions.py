"""Is an object the version the mirror holds? Compared on resourceVersion, before any
parsing: an object whose version is stored cannot have changed."""

from __future__ import annotations

from typing import Any

from topology.parsers import MirroredKind
from topology.services.mirror.removal import Key


def version_of(kind: MirroredKind, obj: dict[str, Any]) -> str:
    """The object's stored version: its resourceVersion, and for NRTs its apiVersion too,
    since one object read through another version is another record."""
    metadata = obj.get("metadata") if isinstance(obj.get("metadata"), dict) else {}
    rv = str(metadata.get("resourceVersion") or "")
    if kind is MirroredKind.TOPOLOGY and rv:
        return f"{obj.get('apiVersion', '')} {rv}"
    return rv


def same_version(kind: MirroredKind, obj: dict[str, Any], stored: dict[Key, str], key: Key) -> bool:
    version = version_of(kind, obj)
    return bool(version) and stored.get(key) == version
