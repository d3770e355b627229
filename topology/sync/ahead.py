"""Parse (and hash) a list page's objects ahead of the writer, in a thread of its own.

A cold resync spends most of its CPU parsing and hashing; the writer spends most of
its time waiting for the database. Done in a thread between the one that fetches the
pages and the writer (see `prefetch`), the parsing overlaps those waits (the waits
release the GIL) and the wait for the next page. Only the work moves: which objects
are written is still decided by the writer against the mirror. The parsing thread
compares versions with the mirror's as the list began; if that view is stale (a list
restarted after its `continue` token expired), it only parses an object the writer
will find unchanged, or leaves one for the writer to parse itself.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from topology.parsers import MirroredKind, ObjectParseError, Record, object_key, parse_object
from topology.services.hashing import EncodedRecord, encode_record
from topology.services.removal import Key
from topology.sync.versions import same_version


@dataclass(frozen=True)
class Parsed:
    """One object parsed ahead: its record (None: a kind Topolens does not mirror) and
    the record's hash and field JSON, or the parser's error."""

    record: Record | None = None
    encoded: EncodedRecord | None = None
    error: ObjectParseError | None = None


def parse_ahead(
    kind: MirroredKind, objects: list[dict[str, Any]], stored: dict[Key, str]
) -> dict[Key, Parsed]:
    """Objects whose version differs from `stored`, parsed and hashed, by key."""
    parsed: dict[Key, Parsed] = {}
    for obj in objects:
        key = object_key(kind, obj)
        if not same_version(kind, obj, stored, key):
            parsed[key] = parse_one(kind, obj)
    return parsed


def parse_one(kind: MirroredKind, obj: dict[str, Any]) -> Parsed:
    try:
        result = parse_object(obj)
    except ObjectParseError as exc:
        return Parsed(error=exc)
    if result is None or result.kind is not kind:
        return Parsed()
    return Parsed(result.record, encode_record(result.record))
