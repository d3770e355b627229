"""A stable content hash of a parsed record: equal hash means nothing to write.

The hash is the sha256 of the record as sorted-key JSON with no spaces, exactly the
bytes of `json.dumps(record, sort_keys=True, separators=(",", ":"))` with dataclasses
as objects of their fields, sets as sorted lists and datetimes in ISO format. Those
bytes are built field by field here, for three reasons that matter when a resync
hashes 100,000 pods and 5,000 NRTs of 384 CPUs:

- one C encoder serves every call (`json.dumps` with options builds one a call, which
  costs as much as encoding a small pod);
- a large tuple of plain values (an NRT's CPU table) is encoded once per distinct
  value: the nodes of a cluster share a handful of CPU layouts;
- the JSON of each field comes out with the digest (`encode_record`), so the writers
  hand it to PostgreSQL instead of encoding the same values a second time.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from functools import cache, lru_cache
from typing import Any

_LARGE_TUPLE = 64  # from this length on, a tuple's encoding is remembered


@dataclass(frozen=True)
class EncodedRecord:
    """A record's content hash and the JSON text of each of its fields."""

    digest: str
    fields: dict[str, str]


def record_hash(record: Any) -> str:
    return encode_record(record).digest


def encode_record(record: Any) -> EncodedRecord:
    """The hash of a record and its fields' JSON (a non-dataclass is one field, "")."""
    if not _is_dataclass(record):
        text = _encode_value(record)
        return EncodedRecord(_digest(text), {"": text})
    fields = _encode_fields(record)
    return EncodedRecord(_digest(_join(fields)), fields)


def _digest(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def _encode_fields(value: Any) -> dict[str, str]:
    return {name: _encode_value(getattr(value, name)) for name in _field_names(type(value))}


def _join(fields: dict[str, str]) -> str:
    """A JSON object from already encoded values; `_field_names` are sorted, like sort_keys."""
    return "{" + ",".join([f"{_KEYS[name]}:{text}" for name, text in fields.items()]) + "}"


def _encode_value(value: Any) -> str:
    kind = type(value)
    scalar = _SCALARS.get(kind)
    if scalar is not None:
        return scalar(value)
    if kind is tuple and len(value) >= _LARGE_TUPLE:
        try:
            return _encode_large_tuple(value)
        except TypeError:  # unhashable inside: encode it as it is
            pass
    elif kind not in (dict, list, tuple) and _is_dataclass(value):
        return _join(_encode_fields(value))
    return _encode(value)


@lru_cache(maxsize=64)
def _encode_large_tuple(value: tuple[Any, ...]) -> str:
    return _encode(value)


@cache
def _field_names(cls: type) -> tuple[str, ...]:
    names = tuple(sorted(f.name for f in dataclasses.fields(cls)))
    _KEYS.update({name: json.encoder.encode_basestring_ascii(name) for name in names})
    return names


_KEYS: dict[str, str] = {}  # field name → its JSON key, filled by _field_names
# Exact JSON of plain scalars without a trip through the encoder (floats excepted:
# NaN and infinities have their own spelling).
_SCALARS: dict[type, Callable[[Any], str]] = {
    str: json.encoder.encode_basestring_ascii,
    int: int.__repr__,
    bool: lambda value: "true" if value else "false",
    type(None): lambda _: "null",
}


def _is_dataclass(value: Any) -> bool:
    return dataclasses.is_dataclass(value) and not isinstance(value, type)


def _json_default(value: Any) -> Any:
    if _is_dataclass(value):
        return {name: getattr(value, name) for name in _field_names(type(value))}
    if isinstance(value, frozenset | set):
        return sorted(value)
    if isinstance(value, datetime):
        return value.isoformat()
    raise TypeError(f"cannot hash {type(value).__name__}")


def _make_encoder() -> Any:
    """One encoder for every call, as json.dumps(sort_keys=True, separators=(",", ":"),
    default=_json_default) would build for each. No circular check: records are trees."""
    c_make_encoder = getattr(json.encoder, "c_make_encoder", None)
    if c_make_encoder is None:  # pragma: no cover - CPython always has the C encoder
        encoder = json.JSONEncoder(
            sort_keys=True, separators=(",", ":"), default=_json_default, check_circular=False
        )
        return lambda value: encoder.encode(value)
    chunks = c_make_encoder(
        None,  # markers: no circular check
        _json_default,
        json.encoder.encode_basestring_ascii,
        None,  # indent
        ":",
        ",",
        True,  # sort_keys
        False,  # skipkeys
        True,  # allow_nan
    )
    return lambda value: "".join(chunks(value, 0))


_encode = _make_encoder()
