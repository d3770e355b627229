"""The sync's knobs, read once from Django settings; tests pass tiny values directly."""

from __future__ import annotations

from dataclasses import dataclass, fields, replace
from typing import Any

from django.conf import settings as django_settings


@dataclass(frozen=True)
class SyncSettings:
    """Durations are in seconds.

    `list_page_writers`: threads that write a list's pages on PostgreSQL, each on a
    connection of its own (see `page_writers`); 1 writes them in the writer's thread.

    `watch_timeout` is asked of the server (`timeoutSeconds`); the client's read timeout
    on a watch is that plus `watch_read_margin`, so a silent dead connection is noticed
    instead of hanging a worker, while a quiet healthy watch is never cut short.
    """

    page_size: int = 500
    connect_timeout: float = 5.0
    read_timeout: float = 30.0
    watch_timeout: int = 240
    watch_read_margin: float = 30.0
    backoff_initial: float = 0.5
    backoff_ceiling: float = 60.0
    list_attempts: int = 6
    batch_size: int = 500
    flush_interval: float = 0.2
    session_seconds: float = 600.0
    lease_seconds: float = 90.0
    resync_interval: int = 3600
    figures_interval: int = 300
    missing_node_grace: float = 30.0
    list_page_writers: int = 2

    @property
    def watch_read_timeout(self) -> float:
        return self.watch_timeout + self.watch_read_margin

    @classmethod
    def load(cls, **overrides: Any) -> SyncSettings:
        """Defaults, then `settings.TOPOLENS_SYNC`, then keyword overrides."""
        configured = getattr(django_settings, "TOPOLENS_SYNC", {})
        known = {f.name for f in fields(cls)}
        unknown = (set(configured) | set(overrides)) - known
        if unknown:
            raise ValueError(f"unknown sync settings: {', '.join(sorted(unknown))}")
        return replace(cls(), **{**configured, **overrides})
