"""A 64-bit hash of a row's columns, kept by PostgreSQL as the row is written.

The node fingerprints (`topology.adapters.fingerprints`) fold every pod and CPU
allocation on a node into one value. Hashing 120,000 rows' text at each what-if after
a mirror change was most of that query's time (about 120 ms on the API benchmark's
cluster), so each row carries its hash in a stored generated column instead: written
with the row by whatever writes it, never stale, and read from the node-name index.

Other databases (SQLite, the embedded default) take no fingerprints and store 0.
"""

from __future__ import annotations

from typing import Any

from django.db import models


class RowHash(models.Func):
    """hashtextextended over `columns` joined by "|" (JSON columns as their text)."""

    output_field = models.BigIntegerField()

    def __init__(self, *columns: str, json_columns: tuple[str, ...] = ()) -> None:
        super().__init__()
        self.columns, self.json_columns = columns, json_columns

    def as_sql(self, compiler: Any, connection: Any, **extra: Any) -> tuple[str, list[Any]]:
        return "0", []

    def as_postgresql(self, compiler: Any, connection: Any, **extra: Any) -> tuple[str, list[Any]]:
        quote = connection.ops.quote_name
        parts = [quote(c) for c in self.columns] + [f"{quote(c)}::text" for c in self.json_columns]
        joined = " || '|' || ".join(parts)
        return f"hashtextextended({joined}, 0)", []
