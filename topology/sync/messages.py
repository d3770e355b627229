"""What the HTTP side of the sync tells the database side, in order, per collection."""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from typing import Any

from topology.sync.resources import Resource


@dataclass(frozen=True)
class WatchEvent:
    resource: Resource
    type: str  # ADDED, MODIFIED or DELETED
    obj: dict[str, Any]
    received_at: float  # time.time() on receipt


@dataclass(frozen=True)
class Bookmark:
    resource: Resource
    resource_version: str
    received_at: float


@dataclass(frozen=True)
class ListPage:
    """A page of a full list. `restarted`: a new list began, forget the pages before it.
    `parsed`: objects the fetching thread parsed ahead, by key (see `ahead`)."""

    resource: Resource
    items: list[dict[str, Any]]
    restarted: bool
    started_at: float
    consumed: threading.Semaphore | None = field(default=None, compare=False)
    parsed: dict[Any, Any] | None = field(default=None, compare=False)


@dataclass(frozen=True)
class ListDone:
    """The list ended: reconcile (remove what it did not hold) and watch from here."""

    resource: Resource
    resource_version: str
    started_at: float


@dataclass(frozen=True)
class Failure:
    resource: Resource
    message: str


@dataclass(frozen=True)
class Recovered:
    resource: Resource


Message = WatchEvent | Bookmark | ListPage | ListDone | Failure | Recovered
