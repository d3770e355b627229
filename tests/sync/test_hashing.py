"""The content hash is sha256 of the record as sorted-key JSON: built field by field for
speed, it must stay byte for byte what json.dumps gives, so that stored hashes stay valid."""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from datetime import UTC, datetime

from topology.demo import generate_demo_objects
from topology.parsers import parse_object
from topology.services import hashing
from topology.services.hashing import encode_record, record_hash


def reference_hash(record: object) -> str:
    text = json.dumps(record, sort_keys=True, default=hashing._json_default, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()


def demo_records() -> list[object]:
    parsed = [parse_object(obj) for obj in generate_demo_objects(nodes=12, seed=9, cluster="h")]
    return [p.record for p in parsed if p is not None]


def test_every_kind_hashes_exactly_as_sorted_key_json_does():
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
    assert hashing._encode_value(unhashable) == json.dumps(
        unhashable, sort_keys=True, separators=(",", ":")
    )
    assert record_hash(value) == reference_hash(value)


def test_a_plain_value_is_hashed_as_its_json():
    assert record_hash({"b": 1, "a": [1, 2]}) == reference_hash({"b": 1, "a": [1, 2]})
