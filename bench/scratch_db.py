"""A benchmark's own PostgreSQL database, created anew or reused, dropped at the end.

The server is DATABASE_URL's when it names PostgreSQL, else postgres://postgres@127.0.0.1:5432.
"""

from __future__ import annotations

import os
from urllib.parse import urlsplit, urlunsplit


def postgres_server() -> str:
    url = os.environ.get("DATABASE_URL", "")
    if not url.startswith(("postgres://", "postgresql://")):
        url = "postgres://postgres@127.0.0.1:5432/postgres"
    return url


def with_database(url: str, name: str) -> str:
    return urlunsplit(urlsplit(url)._replace(path=f"/{name}"))


def scratch_database(server_url: str, name: str, reuse: bool) -> tuple[str, bool]:
    """(url, fresh): the bench's own database `name`, created anew unless reused."""
    import psycopg

    with psycopg.connect(with_database(server_url, "postgres"), autocommit=True) as conn:
        exists = conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", (name,))
        if reuse and exists.fetchone():
            return with_database(server_url, name), False
        conn.execute(f"DROP DATABASE IF EXISTS {name}")
        conn.execute(f"CREATE DATABASE {name}")
    return with_database(server_url, name), True


def drop_database(server_url: str, name: str) -> None:
    import psycopg
    from django.db import connections

    connections.close_all()
    with psycopg.connect(with_database(server_url, "postgres"), autocommit=True) as conn:
        conn.execute(f"DROP DATABASE IF EXISTS {name}")


def vacuum() -> None:
    """VACUUM ANALYZE, as autovacuum does on a live database: a table just filled has no
    visibility map yet, so the snapshot refresh's per-node fingerprints (read from the
    pods' node-name index) would scan every pod row instead (~2x slower here)."""
    from django.db import connection

    with connection.cursor() as cursor:  # autocommit: VACUUM runs outside a transaction
        cursor.execute("VACUUM ANALYZE")
