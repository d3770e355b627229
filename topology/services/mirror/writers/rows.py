"""Batch writes from plain tuples of values, for the writers' hot paths.

Building a model instance per row (signals, descriptors, defaults) costs more than
writing the row: a cold resync writes 100,000 pods and 120,000 zone rows. On PostgreSQL
rows are COPYed in (ids taken from the table's sequence) and updated with one
`UPDATE … FROM (VALUES …)` a batch; elsewhere (SQLite, the embedded default) they become
model instances for Django's bulk methods, so both paths write the same rows.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from datetime import datetime
from functools import cache, partial
from typing import Any, NamedTuple

from django.db import connection
from django.db.models import Field, JSONField, Model

from topology.services.mirror.writers.bulk import BATCH, next_ids, on_postgresql, update_params

Row = Sequence[Any]


class JsonText(NamedTuple):
    """A JSON column's value whose JSON text is already made (the content hash made it):
    PostgreSQL is sent the text, other databases the value."""

    text: str
    value: Any


def _plain(row: Row) -> list[Any]:
    return [value.value if type(value) is JsonText else value for value in row]


def insert_rows(
    model: type[Model], columns: Sequence[str], rows: Sequence[Row], *, ids: bool = True
) -> list[int]:
    """Insert rows of plain values and return their new primary keys, in row order.

    `columns` are field attnames (`node_id`, not `node`), the primary key excluded; a row
    holds the fields' Python values in that order, as one would pass them to the model.
    Concrete fields left out take their default. With `ids=False` (rows nothing points
    at) PostgreSQL numbers the rows itself, which saves a round trip, and [] is returned.
    """
    if not rows:
        return []
    if not on_postgresql():
        objects = [model(**dict(zip(columns, _plain(row), strict=True))) for row in rows]
        model._default_manager.bulk_create(objects, batch_size=BATCH)
        return [obj.pk for obj in objects] if ids else []
    plan = _insert_plan(model, tuple(columns))
    with connection.cursor() as cursor:
        keys = next_ids(cursor, plan.table, plan.pk_column, len(rows)) if ids else []
        defaults = plan.defaults()
        sql = plan.copy_sql if ids else plan.copy_sql_without_ids
        # psycopg's errors become Django's (IntegrityError…), as cursor.execute's do.
        with connection.wrap_database_errors, cursor.cursor.copy(sql) as copy:
            if ids:
                for key, row in zip(keys, rows, strict=True):
                    copy.write_row((*plan.values(key, row), *defaults))
            else:
                for row in rows:
                    copy.write_row((*plan.values(None, row)[1:], *defaults))
    return keys


def insert_prepared(
    model: type[Model],
    columns: Sequence[str],
    prepared_columns: Sequence[str],
    rows: Sequence[tuple[Row, str]],
) -> list[int]:
    """`insert_rows` for rows part of whose text is made already (PostgreSQL only).

    Each row is (values of `columns`, `copy_text` of the values of `prepared_columns`).
    The sync's parsing thread makes the second part while the writer waits for the
    database, which leaves the writer less to do on its own: a cold resync COPYs
    100,000 pods. The new primary keys are returned in row order.
    """
    if not rows:
        return []
    if not on_postgresql():
        raise RuntimeError("insert_prepared writes COPY text: PostgreSQL only")
    plan = _insert_plan(model, (*columns, *prepared_columns))
    values = _text_plan(model, tuple(columns))
    leading: dict[Any, str] = {}  # the rows of a page share most of these values
    with connection.cursor() as cursor:
        keys = next_ids(cursor, plan.table, plan.pk_column, len(rows))
        defaults = plan.default_text()
        rest = "\t" + defaults if defaults else ""
        lines = []
        for key, (row, text) in zip(keys, rows, strict=True):
            lines.append(f"{key}\t{_leading_text(values, leading, row)}\t{text}{rest}\n")
        with connection.wrap_database_errors, cursor.cursor.copy(plan.copy_sql) as copy:
            copy.write("".join(lines))
    return keys


def _leading_text(plan: _TextPlan, seen: dict[Any, str], row: Row) -> str:
    try:
        return seen[row]
    except KeyError:
        seen[row] = text = plan.text(row)
        return text
    except TypeError:  # a row holding a dict or a list
        return plan.text(row)


def copy_field(value: Any) -> str:
    """One value in COPY's text format. Only the types the writers' rows hold: anything
    else is a writer's mistake, refused rather than guessed at."""
    try:
        return _COPY_FIELD[type(value)](value)
    except KeyError:
        raise TypeError(f"no COPY text for {type(value).__name__}") from None


def _copy_string(text: str) -> str:
    """Backslash, tab, newline and carriage return escaped, as COPY's text format wants."""
    if "\\" in text or "\t" in text or "\n" in text or "\r" in text:
        return (
            text.replace("\\", "\\\\")
            .replace("\t", "\\t")
            .replace("\n", "\\n")
            .replace("\r", "\\r")
        )
    return text


_COPY_FIELD: dict[type, Callable[[Any], str]] = {
    str: _copy_string,
    int: int.__repr__,
    bool: lambda value: "t" if value else "f",
    type(None): lambda _: "\\N",
    datetime: lambda value: value.isoformat(),
}


class _TextPlan:
    """COPY text of rows of some columns of a model: JSON columns as `_InsertPlan.values`
    sends them (a nullable column's None is NULL, anything else is JSON text)."""

    def __init__(self, model: type[Model], columns: tuple[str, ...]) -> None:
        fields = {f.attname: f for f in model._meta.concrete_fields}
        unknown = set(columns) - set(fields)
        if unknown:
            raise ValueError(f"{model.__name__} has no column {sorted(unknown)}")
        self._formats = [
            partial(_json_field, fields[name].null, _json_dumps(fields[name]))
            if isinstance(fields[name], JSONField)
            else copy_field
            for name in columns
        ]

    def text(self, row: Row) -> str:
        return "\t".join([format(value) for format, value in zip(self._formats, row, strict=True)])


def _json_field(nullable: bool, dumps: Callable[[Any], str], value: Any) -> str:
    if type(value) is JsonText:
        if value.value is None and nullable:
            return "\\N"
        return _copy_string(value.text)
    if value is None and nullable:
        return "\\N"
    return _copy_string(dumps(value))


@cache
def _text_plan(model: type[Model], columns: tuple[str, ...]) -> _TextPlan:
    return _TextPlan(model, columns)


def copy_text(model: type[Model], columns: tuple[str, ...], row: Row) -> str:
    """The COPY text of a row of `columns` (tab separated), to pass to `insert_prepared`.
    Safe in any thread: it needs no database connection."""
    return _text_plan(model, columns).text(row)


def update_rows(
    model: type[Model], columns: Sequence[str], rows: Sequence[tuple[int, Row]]
) -> None:
    """Update rows by primary key: each item is (pk, values in `columns` order)."""
    if not rows:
        return
    if not on_postgresql():
        objects = []
        for key, values in rows:
            obj = model(pk=key, **dict(zip(columns, _plain(values), strict=True)))
            obj._state.adding = False
            objects.append(obj)
        names = [model._meta.get_field(c).name for c in columns]
        model._default_manager.bulk_update(objects, names, batch_size=BATCH)
        return
    plan = _insert_plan(model, tuple(columns))
    fields = [plan.fields[c] for c in columns]
    for start in range(0, len(rows), BATCH):
        chunk = rows[start : start + BATCH]
        params = [value for key, values in chunk for value in plan.values(key, values)]
        update_params(model, fields, len(chunk), params)


class _InsertPlan:
    """How rows of some columns of a model go into COPY, decided once per (model, columns)."""

    def __init__(self, model: type[Model], columns: tuple[str, ...]) -> None:
        meta = model._meta
        pk = meta.pk
        assert pk is not None
        self.table = meta.db_table
        self.pk_column = pk.column
        # generated columns (a row's hash) are the database's to write
        self.fields = {
            f.attname: f for f in meta.concrete_fields if f is not pk and not f.generated
        }
        unknown = set(columns) - set(self.fields)
        if unknown:
            raise ValueError(f"{model.__name__} has no column {sorted(unknown)}")
        self._json = [
            (i + 1, self.fields[c].null, _json_dumps(self.fields[c]))
            for i, c in enumerate(columns)
            if isinstance(self.fields[c], JSONField)
        ]
        # Fields left out (one added to a model since this writer was written) take
        # their default, read at each insert since a default may be a callable.
        self._rest = [f for name, f in self.fields.items() if name not in columns]
        quote = connection.ops.quote_name
        names = [self.fields[c].column for c in columns] + [f.column for f in self._rest]
        table = quote(self.table)
        self.copy_sql = f"COPY {table} ({', '.join(map(quote, [pk.column, *names]))}) FROM STDIN"
        self.copy_sql_without_ids = f"COPY {table} ({', '.join(map(quote, names))}) FROM STDIN"

    def values(self, key: int | None, row: Row) -> list[Any]:
        """The primary key and the row, JSON encoded for psycopg."""
        values = [key, *row]
        for index, nullable, dumps in self._json:
            value = values[index]
            if type(value) is JsonText:
                values[index] = None if value.value is None and nullable else value.text
            else:
                values[index] = None if value is None and nullable else dumps(value)
        return values

    def defaults(self) -> tuple[Any, ...]:
        return tuple(f.get_db_prep_save(f.get_default(), connection) for f in self._rest)

    def default_text(self) -> str:
        """The COPY text of `defaults` (empty when every column is written)."""
        if not self._rest:
            return ""
        model = self._rest[0].model
        columns = tuple(f.attname for f in self._rest)
        return copy_text(model, columns, [f.get_default() for f in self._rest])


def _json_dumps(field: Field[Any, Any]) -> Callable[[Any], str]:
    """JSON text as the field would encode it (COPY takes text; PostgreSQL parses it)."""
    encoder = getattr(field, "encoder", None)
    return partial(json.dumps, cls=encoder) if encoder else _dumps


def _make_dumps() -> Callable[[Any], str]:
    """`json.dumps(value)`, with one C encoder for every call: json.dumps builds one a
    call, which costs more than encoding a zone's costs (a cold resync: 40,000 zones)."""
    c_make_encoder = getattr(json.encoder, "c_make_encoder", None)
    if c_make_encoder is None:  # pragma: no cover - CPython always has the C encoder
        return json.dumps
    encoder = json.JSONEncoder()
    chunks = c_make_encoder(
        None,  # markers: no circular check (rows hold trees)
        encoder.default,  # raises TypeError, as json.dumps does
        json.encoder.encode_basestring_ascii,
        None,  # indent
        encoder.key_separator,
        encoder.item_separator,
        False,  # sort_keys
        False,  # skipkeys
        True,  # allow_nan
    )
    return lambda value: "".join(chunks(value, 0))


_dumps = _make_dumps()


@cache
def _insert_plan(model: type[Model], columns: tuple[str, ...]) -> _InsertPlan:
    return _InsertPlan(model, columns)
