"""Parse (and encode) a list page's objects ahead of the writer, in a thread of its own.

A cold resync spends most of its CPU parsing and encoding; the writer spends most of
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
from topology.parsers.pod import PodRecord
from topology.services.mirror.hashing import (
    EncodedRecord,
    encode_columns,
    encode_record,
    version_digest,
)
from topology.services.mirror.removal import Key
from topology.services.mirror.writers.pods import POD_JSON_FIELDS, pod_row_text
from topology.services.mirror.writers.topologies import TOPOLOGY_JSON_FIELDS
from topology.sync.versions import same_version, version_of


@dataclass(frozen=True)
class Parsed:
    """One object parsed ahead: its record (None: a kind Topolens does not mirror) and
    what its writer takes of it (see `_encoded`), or the parser's error."""

    record: Record | None = None
    encoded: EncodedRecord | None = None
    error: ObjectParseError | None = None


def parse_ahead(
    kind: MirroredKind,
    objects: list[dict[str, Any]],
    stored: dict[Key, str],
    *,
    row_texts: bool = False,
) -> dict[Key, Parsed]:
    """Objects whose version differs from `stored`, parsed and hashed, by key.

    `row_texts` (the mirror is on PostgreSQL): a new pod's COPY text is made here too
    (`EncodedRecord.row`), so that the writer, the sync's busiest thread, has only to
    add its id, node and time (`writers.pods.pod_row_text`)."""
    parsed: dict[Key, Parsed] = {}
    for obj in objects:
        key = object_key(kind, obj)
        if not same_version(kind, obj, stored, key):
            parsed[key] = parse_one(kind, obj)
            if row_texts and kind is MirroredKind.POD and key not in stored:
                parsed[key] = _with_row_text(parsed[key])
    return parsed


def parse_one(kind: MirroredKind, obj: dict[str, Any]) -> Parsed:
    try:
        result = parse_object(obj)
    except ObjectParseError as exc:
        return Parsed(error=exc)
    if result is None or result.kind is not kind:
        return Parsed()
    return Parsed(result.record, _encoded(kind, obj, result.record))


def _encoded(kind: MirroredKind, obj: dict[str, Any], record: Record) -> EncodedRecord | None:
    """What the writer of `kind` takes from the parsing thread: for pods and NRTs, the
    digest of the object's version and the JSON of its record's JSON columns (see
    `hashing.version_digest`); None for the other kinds, whose writers hash their few
    records themselves. An object without a resourceVersion (none the API server sends)
    gets the content hash."""
    columns = _JSON_FIELDS.get(kind)
    if columns is None:
        return None
    version = version_of(kind, obj)
    if not version:
        return encode_record(record)
    uid = getattr(record, "uid", "")
    return encode_columns(record, columns, version_digest(uid, version))


_JSON_FIELDS = {MirroredKind.POD: POD_JSON_FIELDS, MirroredKind.TOPOLOGY: TOPOLOGY_JSON_FIELDS}


def _with_row_text(item: Parsed) -> Parsed:
    record, encoded = item.record, item.encoded
    if not isinstance(record, PodRecord) or encoded is None:
        return item
    row = pod_row_text(record, encoded)
    return Parsed(record, EncodedRecord(encoded.digest, encoded.fields, row))
