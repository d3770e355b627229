"""What every batch writer shares: outcomes, the per-batch result, and last-wins keying."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Hashable, Iterable
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any, Protocol, TypeVar

from django.db.models import Q

from topology.choices import AllocationSource

POD_SOURCES = (AllocationSource.CRANE, AllocationSource.KOORDINATOR)
R = TypeVar("R")
K = TypeVar("K", bound=Hashable)


class Hashed(Protocol):
    """A mirrored row that stores the hash of the record it was written from."""

    content_hash: str


M = TypeVar("M", bound=Hashed)


class Outcome(StrEnum):
    CREATED = "created"
    UPDATED = "updated"
    UNCHANGED = "unchanged"


class MissingNodeError(LookupError):
    """An object that needs its Node, which the mirror does not hold."""


@dataclass
class BatchResult:
    """What one batch write did: an outcome per key, or why a key was not written.

    Keys are tuples: (namespace, name) for pods, (name,) for every other kind.
    """

    outcomes: dict[tuple[str, ...], Outcome] = field(default_factory=dict)
    errors: dict[tuple[str, ...], str] = field(default_factory=dict)

    def counts(self) -> Counter[str]:
        return Counter(outcome.value for outcome in self.outcomes.values())

    @property
    def written(self) -> int:
        return sum(1 for outcome in self.outcomes.values() if outcome is not Outcome.UNCHANGED)


def latest_by_key(records: Iterable[R], key: Callable[[R], K]) -> dict[K, R]:
    """One record per key, the last one winning: a batch may hold an object twice."""
    latest: dict[K, R] = {}
    for record in records:
        latest[key(record)] = record
    return latest


def row_to_write(
    result: BatchResult,
    key: tuple[str, ...],
    stored: M | None,
    digest: str,
    new: Callable[[], M],
    created: list[M],
    updated: list[M],
) -> M | None:
    """The row `key`'s record goes into, its outcome recorded: None when the stored row's
    content hash says nothing changed; else the stored row (updated) or `new()`
    (created), added to its list for the bulk write."""
    if stored is not None and stored.content_hash == digest:
        result.outcomes[key] = Outcome.UNCHANGED
        return None
    if stored is None:
        row = new()
        created.append(row)
        result.outcomes[key] = Outcome.CREATED
        return row
    updated.append(stored)
    result.outcomes[key] = Outcome.UPDATED
    return stored


def assign(instance: Any, values: dict[str, Any]) -> None:
    for name, value in values.items():
        setattr(instance, name, value)


def namespaced(keys: Iterable[tuple[str, str]], name_field: str = "name") -> Q:
    """(namespace, name) keys as a filter the (cluster, namespace, name) indexes serve:
    one `name IN (...)` per namespace, not a bare `name IN` that scans every pod."""
    by_namespace: dict[str, list[str]] = {}
    for namespace, name in keys:
        by_namespace.setdefault(namespace, []).append(name)
    query = Q(pk__in=[])
    for namespace, names in by_namespace.items():
        query |= Q(namespace=namespace, **{f"{name_field}__in": names})
    return query
