"""Batch writes that cost one statement a batch and no Python expression tree per row.

- `bulk_update`: Django's bulk_update builds a CASE WHEN per field and row, about a
  millisecond of Python per row: too slow for a sync applying hundreds of events a
  second. On PostgreSQL this sends `UPDATE t SET ... FROM (VALUES ...) v WHERE t.id =
  v.id` instead, with every value prepared by its field as Django would.
- `bulk_insert`: a cold resync inserts 100,000 pods; on PostgreSQL it takes ids from the
  table's sequence and COPYs the rows in, the way a raw psycopg load would.
- `rows.insert_rows` / `rows.update_rows`: the same from plain tuples of values.

On other databases (SQLite: the embedded default) Django's own bulk methods do it.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import cache
from typing import Any

from django.db import connection
from django.db.models import (
    BigIntegerField,
    BinaryField,
    BooleanField,
    CharField,
    Field,
    FloatField,
    ForeignKey,
    IntegerField,
    JSONField,
    Model,
    OneToOneField,
    PositiveBigIntegerField,
    PositiveIntegerField,
    SlugField,
    TextField,
)
from psycopg.types.json import Jsonb

BATCH = 500


def on_postgresql() -> bool:
    """Whether the PostgreSQL paths (COPY, UPDATE … FROM VALUES, arrays) apply; the tests
    turn it off to check that Django's own bulk methods write the same rows."""
    return connection.vendor == "postgresql"


# Field types whose Python value psycopg adapts exactly as Django would prepare it.
_PLAIN = {
    BigIntegerField,
    BinaryField,
    BooleanField,
    CharField,
    FloatField,
    ForeignKey,
    IntegerField,
    OneToOneField,
    PositiveBigIntegerField,
    PositiveIntegerField,
    SlugField,
    TextField,
}


def bulk_insert(objects: Sequence[Model]) -> None:
    """Insert new model instances and set their primary keys."""
    if not objects:
        return
    model = type(objects[0])
    if not on_postgresql():
        model._default_manager.bulk_create(objects, batch_size=BATCH)
        return
    meta = model._meta
    table = meta.db_table
    pk = meta.pk
    assert pk is not None
    fields = [f for f in meta.concrete_fields if f is not pk]
    prepare = [_preparer(f) for f in fields]
    with connection.cursor() as cursor:
        for obj, key in zip(objects, next_ids(cursor, table, pk.column, len(objects)), strict=True):
            obj.pk = key
            obj._state.adding = False
            obj._state.db = connection.alias
        quote = connection.ops.quote_name
        columns = ", ".join(quote(f.column) for f in [pk, *fields])
        with (
            connection.wrap_database_errors,  # psycopg's errors as Django's, as execute does
            cursor.cursor.copy(f"COPY {quote(table)} ({columns}) FROM STDIN") as copy,
        ):
            for obj in objects:
                copy.write_row([obj.pk, *(p(obj) for p in prepare)])


# The sequence is looked up once, not once a row: per row, the lookup cost six times
# what the nextval does (a cold resync takes 250,000 ids).
_NEXT_IDS = (
    "WITH s AS MATERIALIZED (SELECT pg_get_serial_sequence(%s, %s)::regclass AS seq) "
    "SELECT nextval(s.seq) FROM s, generate_series(1, %s)"
)


def next_ids(cursor: Any, table: str, column: str, count: int) -> list[int]:
    """`count` new values of the sequence behind `table`.`column`, in order (PostgreSQL)."""
    cursor.execute(_NEXT_IDS, [table, column, count])
    return [key for (key,) in cursor.fetchall()]


def _preparer(field: Field[Any, Any]) -> Callable[[Model], Any]:
    """How a field's value goes into COPY. Plain values go as they are; JSON is wrapped
    for psycopg; fields with a pre_save (auto_now…) or a custom preparation take Django's
    path. Deciding once per field, not per value, saves most of the Python cost."""
    attname = field.attname
    if isinstance(field, JSONField):
        nullable = field.null
        return lambda obj: _json(getattr(obj, attname), nullable)
    if type(field).pre_save is not Field.pre_save or type(field) not in _PLAIN:
        return lambda obj: field.get_db_prep_save(field.pre_save(obj, True), connection)
    return lambda obj: getattr(obj, attname)


def _json(value: Any, nullable: bool) -> Any:
    return None if value is None and nullable else Jsonb(value)


def bulk_update(objects: Sequence[Model], fields: Sequence[str], batch_size: int = BATCH) -> None:
    if not objects:
        return
    model = type(objects[0])
    if not on_postgresql():
        model._default_manager.bulk_update(objects, list(fields), batch_size=batch_size)
        return
    meta = model._meta
    columns: list[Field[Any, Any]] = [meta.get_field(name) for name in fields]  # type: ignore[misc]
    for start in range(0, len(objects), batch_size):
        _update(model, objects[start : start + batch_size], columns)


def _update(model: type[Model], objects: Sequence[Model], fields: list[Field[Any, Any]]) -> None:
    pk = model._meta.pk
    assert pk is not None
    params: list[Any] = []
    for obj in objects:
        params.append(pk.get_db_prep_save(obj.pk, connection))
        params += [f.get_db_prep_save(getattr(obj, f.attname), connection) for f in fields]
    update_params(model, fields, len(objects), params)


def update_params(
    model: type[Model], fields: list[Field[Any, Any]], count: int, params: list[Any]
) -> None:
    """UPDATE `count` rows from flat params: (pk, *field values) per row."""
    quote = connection.ops.quote_name
    pk = model._meta.pk
    assert pk is not None
    key = quote(pk.column)
    casts = [pk.rel_db_type(connection), *(_unbounded(f.db_type(connection)) for f in fields)]
    row = "(" + ", ".join(f"%s::{cast}" for cast in casts) + ")"
    names = ", ".join(quote(f.column) for f in fields)
    assignments = ", ".join(f"{quote(f.column)} = v.{quote(f.column)}" for f in fields)
    sql = (
        f"UPDATE {quote(model._meta.db_table)} AS t SET {assignments} "
        f"FROM (VALUES {', '.join([row] * count)}) AS v({key}, {names}) "
        f"WHERE t.{key} = v.{key}"
    )
    with connection.cursor() as cursor:
        cursor.execute(sql, params)


def _unbounded(db_type: str | None) -> str | None:
    """`varchar(n)` as plain `varchar`: an explicit cast to varchar(n) silently truncates
    a longer value, where the assignment to the column refuses it (as an INSERT or COPY
    would), which is what must happen: a value too long is an error, never cut short."""
    return _VARCHAR.sub("varchar", db_type) if db_type else db_type


_VARCHAR = re.compile(r"^varchar\(\d+\)$")


BULK_LOAD = 5_000  # rows a load writes before its tables' statistics are refreshed


@dataclass
class LoadStatistics:
    """When a bulk load (a sync's list, an import) refreshes its tables' statistics.

    After BULK_LOAD rows, then 4, 16… times as many, so that the planner never plans
    the load's next statements, nor a what-if's queries after it, for the empty table
    it saw at the start; once more at the end if the load has since written as many
    rows again.
    """

    written: int = 0
    analyse_at: int = BULK_LOAD
    analysed: int = 0  # rows written when the statistics were last refreshed

    def wrote(self, count: int) -> bool:
        """Count rows written; True when the statistics are due for a refresh."""
        self.written += count
        if self.written < self.analyse_at:
            return False
        self.analyse_at *= 4
        self.analysed = self.written
        return True

    def stale_at_end(self) -> bool:
        """Whether the load ends with statistics of less than half the rows it wrote (a
        last refresh at 80,000 of 100,000 pods, or on the last page, is recent enough)."""
        return self.written >= BULK_LOAD and self.written >= 2 * self.analysed


def refresh_statistics(models: Sequence[type[Model]]) -> None:
    """ANALYZE tables a bulk load just filled: until autovacuum gets to them, PostgreSQL
    plans as if they were empty, and scans instead of using the indexes.

    Only the columns that keys, foreign keys and indexes use are analysed: the planner
    needs nothing else, and sampling the large JSON columns (an NRT's raw object is
    tens of kilobytes) would cost more than the rest of the load's statements.
    """
    if not on_postgresql():
        return
    quote = connection.ops.quote_name
    with connection.cursor() as cursor:
        for model in models:
            columns = ", ".join(quote(c) for c in _planned_columns(model))
            cursor.execute(f"ANALYZE {quote(model._meta.db_table)} ({columns})")


@cache
def _planned_columns(model: type[Model]) -> tuple[str, ...]:
    """Columns of the primary key, the foreign keys, the unique constraints and indexes."""
    meta = model._meta
    names: list[str] = [f.attname for f in meta.concrete_fields if f.primary_key or f.is_relation]
    for rule in [*meta.constraints, *meta.indexes]:
        names += [name.lstrip("-") for name in getattr(rule, "fields", ())]  # "-f": descending
    columns = {meta.get_field(name).column: None for name in names}
    return tuple(columns)
