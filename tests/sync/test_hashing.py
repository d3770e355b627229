"""The content hash is sha256 of the record as sorted-key JSON: built field by field for
speed, it must stay byte for byte what one orjson.dumps of the record gives, so that
stored hashes stay valid."""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from datetime import UTC, datetime

import orjson
import pytest

from topology.demo import generate_demo_objects
from topology.parsers import MirroredKind, parse_object
from topology.services.mirror import hashing
from topology.services.mirror.hashing import encode_record, record_hash, version_digest
from topology.services.mirror.writers.pods import POD_JSON_FIELDS
from topology.services.mirror.writers.topologies import TOPOLOGY_JSON_FIELDS
from topology.sync.ahead import parse_one
from topology.sync.versions import version_of

REFERENCE_OPTIONS = (
    orjson.OPT_SORT_KEYS
    | orjson.OPT_NON_STR_KEYS
    | orjson.OPT_PASSTHROUGH_DATACLASS
    | orjson.OPT_PASSTHROUGH_DATETIME
)


def reference_json(record: object) -> bytes:
    return orjson.dumps(record, default=hashing._json_default, option=REFERENCE_OPTIONS)


def reference_hash(record: object) -> str:
    return hashlib.sha256(reference_json(record)).hexdigest()


def demo_records() -> list[object]:
    parsed = [parse_object(obj) for obj in generate_demo_objects(nodes=12, seed=9, cluster="h")]
    return [p.record for p in parsed if p is not None]


def test_every_kind_hashes_exactly_as_one_sorted_key_orjson_dump_does():
    records = demo_records()
    kinds = {type(record).__name__ for record in records}
    assert {"NodeRecord", "TopologyRecord", "PodRecord", "ReservationRecord"} <= kinds
    for record in records:
        assert record_hash(record) == reference_hash(record)


def test_each_field_comes_with_its_json():
    record = next(r for r in demo_records() if type(r).__name__ == "TopologyRecord")
    encoded = encode_record(record)
    assert json.loads(encoded.fields["raw"]) == record.raw
    assert json.loads(encoded.fields["zones"]) == json.loads(
        json.dumps(record.zones, default=hashing._json_default)
    )
    assert encoded.digest == record_hash(record)


@dataclass(frozen=True)
class Sample:
    when: datetime
    tags: frozenset[str]
    ratio: float
    flag: bool
    nothing: None
    text: str
    rows: tuple[tuple[int, int], ...]


def test_scalars_sets_dates_floats_and_large_tuples_keep_their_json():
    rows = tuple((i, i * 2) for i in range(200))  # long enough to be remembered
    sample = Sample(
        datetime(2024, 5, 1, tzinfo=UTC), frozenset({"b", "a"}), 0.5, True, None, "é\n", rows
    )
    again = Sample(sample.when, sample.tags, 1e300, False, None, '"q"', tuple(list(rows)))
    for value in (sample, again, sample):  # the second `sample` hits the remembered tuple
        assert record_hash(value) == reference_hash(value)


def test_a_large_tuple_of_unhashable_values_is_still_encoded():
    value = Sample(datetime(2024, 1, 1, tzinfo=UTC), frozenset(), 0.0, False, None, "", ())
    unhashable = tuple({"n": i} for i in range(100))
    assert hashing._encode_value(unhashable) == reference_json(unhashable).decode()
    assert record_hash(value) == reference_hash(value)


def test_a_plain_value_is_hashed_as_its_json():
    assert record_hash({"b": 1, "a": [1, 2]}) == reference_hash({"b": 1, "a": [1, 2]})


def test_non_ascii_text_is_hashed_as_utf8_json():
    sample = Sample(datetime(2024, 1, 1), frozenset({"zé", "ä"}), 1.5, False, None, "ü\u2028", ())
    assert record_hash(sample) == reference_hash(sample)
    assert "ü" in encode_record(sample).fields["text"]  # as PostgreSQL would store it


def test_the_string_shortcut_spells_every_character_as_orjson_does():
    """Plain string fields skip orjson (see `_SCALARS`): that must never change a hash."""
    characters = [*range(0xD800), *range(0xE000, 0x10000), *range(0x10000, 0x110000, 97)]
    encode = hashing._SCALARS[str]
    wrong = [c for c in characters if encode(chr(c)) != orjson.dumps(chr(c)).decode()]
    assert wrong == []


def test_an_integer_beyond_64_bits_is_still_hashed_the_same_way_every_time():
    huge = {"memory": 2**70, "cpu": 4}
    with pytest.raises(TypeError):
        orjson.dumps(huge)
    text = hashing._encode_value(huge)
    assert json.loads(text) == huge
    assert text == '{"cpu":4,"memory":1180591620717411303424}'
    assert record_hash(huge) == record_hash(dict(reversed(huge.items())))


def _demo_object(kind: str) -> dict:
    objects = generate_demo_objects(nodes=12, seed=9, cluster="h")
    return next(o for o in objects if o["kind"] == kind and o["metadata"].get("resourceVersion"))


@pytest.mark.parametrize(
    ("kind", "columns"),
    [
        (MirroredKind.POD, POD_JSON_FIELDS),
        (MirroredKind.TOPOLOGY, TOPOLOGY_JSON_FIELDS),
    ],
)
def test_the_sync_digests_pods_and_topologies_by_version_and_encodes_their_json_columns(
    kind, columns
):
    obj = _demo_object(str(kind))
    parsed = parse_one(kind, obj)
    content = encode_record(parsed.record)
    assert parsed.encoded.digest == version_digest(obj["metadata"]["uid"], version_of(kind, obj))
    assert parsed.encoded.digest != content.digest
    assert parsed.encoded.fields == {name: content.fields[name] for name in columns}


def test_an_object_without_a_version_gets_the_content_hash():
    obj = _demo_object("Pod")
    del obj["metadata"]["resourceVersion"]
    parsed = parse_one(MirroredKind.POD, obj)
    assert parsed.encoded == encode_record(parsed.record)


def test_kinds_whose_writers_hash_their_records_get_no_encoding_ahead():
    parsed = parse_one(MirroredKind.NODE, _demo_object("Node"))
    assert parsed.record is not None and parsed.encoded is None


def test_a_version_digest_changes_with_the_uid_and_the_version():
    digests = {
        version_digest(uid, version)
        for uid in ("a", "b")
        for version in ("1", "2", "topology.node.k8s.io/v1alpha2 1")
    }
    assert len(digests) == 6
    assert all(len(d) == 64 for d in digests)
