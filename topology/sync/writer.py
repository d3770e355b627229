"""The database side of a sync: the only thread that writes, in batches.

Watch events are buffered and coalesced (the latest event per object wins) and
flushed as one transaction when the batch is full or its oldest event has waited
`flush_interval`. List pages are applied as they come, after flushing the buffer, so
that per collection everything reaches the database in the order the server sent it.
A batch the database refuses is retried object by object in savepoints, so one bad
row costs one sync error, not the batch. A list page whose objects all carry their
stored resourceVersion costs no transaction and no query; a list reads what the mirror
holds once, when it begins; a session's commits do not wait for the disk
(`relaxed_commits`); on PostgreSQL a list's pages are written by `list_page_writers`
threads on connections of their own (see `page_writers`), their results taken in order.
"""

from __future__ import annotations

import logging
import time
from collections import deque
from collections.abc import Callable, Iterator
from concurrent.futures import Future
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from django.db import DatabaseError, InterfaceError, OperationalError, connection, transaction
from django.utils import timezone

from topology.choices import SyncResource
from topology.models import Cluster
from topology.parsers import MirroredKind, object_key
from topology.services.mirror.removal import Key, mirrored_keys, remove_objects, stored_versions
from topology.services.mirror.writers import mirrored_node_ids, refresh_statistics_of
from topology.services.mirror.writers.bulk import LoadStatistics
from topology.sync import state
from topology.sync.accounting import Accounts
from topology.sync.apply import Applied, apply_objects, delete_objects, merge, needs_writing
from topology.sync.messages import (
    Bookmark,
    Failure,
    ListDone,
    ListPage,
    Message,
    Recovered,
    WatchEvent,
)
from topology.sync.page_writers import PageWriters, can_write_in_parallel
from topology.sync.report import SyncReport
from topology.sync.resources import SYNC_ORDER, Resource
from topology.sync.settings import SyncSettings

logger = logging.getLogger(__name__)
FlushHook = Callable[[list[WatchEvent], float], None]
_CONNECTION_ERRORS = (OperationalError, InterfaceError)


def _at(timestamp: float) -> datetime:
    return datetime.fromtimestamp(timestamp, tz=UTC)


@contextmanager
def relaxed_commits() -> Iterator[None]:
    """For a session: on PostgreSQL, commits do not wait for the disk.

    `synchronous_commit = off` on this connection until the session ends; it saves a
    disk flush a batch (200 in a 100,000-pod list). A crash of the database can lose the
    last fraction of a second of commits, never consistency, and only a suffix of them,
    since the WAL keeps commit order: the sync state written after a batch is lost with
    it, never without it, so the mirror is never behind the resourceVersion it records.
    A mirror that lost its last batches is one resync behind; the next session lists
    everything again anyway.
    """
    relaxed = connection.vendor == "postgresql"
    if relaxed:
        with connection.cursor() as cursor:
            cursor.execute("SET synchronous_commit TO OFF")
    try:
        yield
    finally:
        if relaxed:
            _reset_synchronous_commit()


def _reset_synchronous_commit() -> None:
    try:
        with connection.cursor() as cursor:
            cursor.execute("RESET synchronous_commit")
    except DatabaseError:  # the connection broke: its settings went with it
        logger.debug("could not reset synchronous_commit", exc_info=True)


@dataclass
class _Listing:
    """One collection's list in progress.

    `stored`: what the mirror held when the list began, read once (one query, not one
    per page; the lease makes this writer the only one). `statistics`: when the list
    refreshes its tables' statistics (see `LoadStatistics`).
    """

    stored: dict[Key, str]
    node_ids: dict[str, int] | None = None  # of a pod list: the cluster's Nodes, read once
    fresh: bool = False  # read by begin_list, no page applied yet
    seen: set[Key] = field(default_factory=set)
    statistics: LoadStatistics = field(default_factory=LoadStatistics)


Refusal = tuple[Resource, Key, DatabaseError]  # an object the database refused


@dataclass
class _Written:
    """What writing a page did, for the writer to take in (see `_take_in`)."""

    applied: Applied
    refused: list[Refusal] = field(default_factory=list)


@dataclass
class _InFlight:
    """A page being written by a page writer."""

    page: ListPage
    listing: _Listing
    written: Future[_Written]


class MirrorWriter:
    def __init__(
        self,
        cluster: Cluster,
        settings: SyncSettings,
        report: SyncReport,
        *,
        on_flush: FlushHook | None = None,
    ) -> None:
        self.cluster = cluster
        self.report = report
        self.accounts = Accounts(cluster, report, settings.missing_node_grace)
        self._settings = settings
        self._on_flush = on_flush
        self._buffer: dict[tuple[SyncResource, Key], WatchEvent] = {}
        self._bookmarks: dict[SyncResource, Bookmark] = {}
        self._oldest: float | None = None
        self._last_flush = 0.0
        self._listings: dict[SyncResource, _Listing] = {}
        self._page_writers: PageWriters | None = None
        self._in_flight: deque[_InFlight] = deque()

    def handle(self, message: Message) -> None:
        if isinstance(message, WatchEvent):
            key = object_key(message.resource.kind, message.obj)
            self._buffer[(message.resource.sync, key)] = message
            self._note(message.received_at)
        elif isinstance(message, Bookmark):
            self._bookmarks[message.resource.sync] = message
            self._note(message.received_at)
        elif isinstance(message, ListPage):
            self._apply_page(message)
        elif isinstance(message, ListDone):
            self._finish_list(message)
        elif isinstance(message, Failure):
            self.report.add(message.resource.sync, "failures")
            state.record_failure(self.cluster, message.resource.sync, message.message)
        elif isinstance(message, Recovered):
            state.record_recovery(self.cluster, message.resource.sync)
        if len(self._buffer) >= self._settings.batch_size:
            self.flush()

    def _note(self, received_at: float) -> None:
        """A batch's age is its oldest event's, counted from receipt: events that queued
        behind a long flush are due at once."""
        if self._oldest is None or received_at < self._oldest:
            self._oldest = received_at

    def due(self) -> bool:
        now = time.time()
        if self._oldest is not None and now - self._oldest >= self._settings.flush_interval:
            return True
        # Objects waiting for their Node are retried, but not on every turn of the loop.
        return bool(self.accounts.waiting) and now - self._last_flush >= 1.0

    def close(self) -> None:
        """However a session ends: its page writers finish their pages and stop, and
        their connections close. Results not yet taken in are dropped (a session that
        ends on an error records no list; the next one reads the mirror afresh)."""
        writers, self._page_writers = self._page_writers, None
        self._in_flight.clear()
        if writers is not None:
            writers.close()

    def finish(self) -> None:
        """End of a session: write what is buffered; what still waits is an error."""
        self._stop_page_writers()
        self.flush()
        self.accounts.give_up_waiting(everything=True)

    # Lists ----------------------------------------------------------------------------

    def begin_list(self, resource: Resource) -> dict[Key, str]:
        """Read what the mirror holds of a collection about to be listed (key → version);
        the first page uses it rather than reading it again. Do not change it."""
        self.flush()
        stored = stored_versions(self.cluster, resource.kind, api_group=resource.scope_group)
        self._listings[resource.sync] = self._listing(resource, stored, fresh=True)
        return stored

    def _listing(self, resource: Resource, stored: dict[Key, str], *, fresh: bool) -> _Listing:
        """A pod list also reads the cluster's Nodes once: the Nodes are listed first,
        and each page of pods would otherwise look up its nodes' ids (200 queries in a
        100,000-pod list)."""
        pods = resource.kind is MirroredKind.POD
        node_ids = mirrored_node_ids(self.cluster) if pods else None
        return _Listing(stored, node_ids=node_ids, fresh=fresh)

    def abandon_list(self, resource: Resource) -> None:
        """The list failed: the next one reads the mirror afresh. Its pages in flight are
        written and taken in first (what they wrote is in the mirror)."""
        self._stop_page_writers()
        self._listings.pop(resource.sync, None)

    def _apply_page(self, page: ListPage) -> None:
        self.flush()
        resource = page.resource
        listing = self._listings.get(resource.sync)
        if listing is None or (page.restarted and not listing.fresh):
            self._take_in_flight()  # what the mirror holds includes the pages written so far
            stored = stored_versions(self.cluster, resource.kind, api_group=resource.scope_group)
            listing = self._listings[resource.sync] = self._listing(resource, stored, fresh=False)
        listing.fresh = False
        writes = needs_writing(resource.kind, page.items, listing.stored)
        if writes and self._page_writers_for_list() is not None:
            self._write_in_flight(resource, page, listing)
            return
        self._take_in_flight()
        try:
            if writes:
                written = self._write_page(resource, page, listing)
            else:  # a page of a no-change resync: no transaction, no query
                written = _Written(
                    apply_objects(
                        self.cluster, resource, page.items, timezone.now(), listing.stored
                    )
                )
        finally:
            if page.consumed is not None:
                page.consumed.release()
        self._take_in(resource, page, listing, written)

    def _take_in(
        self, resource: Resource, page: ListPage, listing: _Listing, written: _Written
    ) -> None:
        """Account for a written page (in this thread, in the order of the pages)."""
        applied = written.applied
        self._record_refusals(written.refused)
        listing.seen.update(applied.keys)
        # listed, though not written: the mirror keeps what it had (the list's end
        # must not remove an object the cluster still has)
        listing.seen.update(key for _, key, _ in written.refused)
        if listing.statistics.wrote(len(applied.written)):
            refresh_statistics_of(resource.kind)
        self._settle(resource, applied, page.items)
        self.report.add(resource.sync, "listed", len(page.items))

    def _write_page(self, resource: Resource, page: ListPage, listing: _Listing) -> _Written:
        """A page in one transaction; if the database refuses it, one object at a time.

        No savepoint: the page's transaction holds nothing else, so rolling it back
        loses nothing, and a 100,000-pod list saves two round trips a page. The retry
        trusts neither the list's snapshot of the mirror nor its Node ids. Runs in this
        thread or a page writer's, so it leaves the writer's accounts to `_take_in`.
        """
        try:
            with transaction.atomic():
                return _Written(
                    apply_objects(
                        self.cluster,
                        resource,
                        page.items,
                        timezone.now(),
                        listing.stored,
                        page.parsed,
                        node_ids=listing.node_ids,
                    )
                )
        except _CONNECTION_ERRORS:
            raise
        except DatabaseError:
            self._warn_batch_failed(resource)
        refused: list[Refusal] = []
        with transaction.atomic():  # trusting the database now, not the list's snapshot
            applied = self._apply_one_by_one(resource, page.items, set(), refused)
        return _Written(applied, refused)

    # Pages in flight --------------------------------------------------------------------

    def _page_writers_for_list(self) -> PageWriters | None:
        if self._page_writers is None:
            count = self._settings.list_page_writers
            if count > 1 and can_write_in_parallel():
                self._page_writers = PageWriters(count)
        return self._page_writers

    def _write_in_flight(self, resource: Resource, page: ListPage, listing: _Listing) -> None:
        """Hand the page to a page writer; take in the pages written meanwhile, and wait
        for the oldest while more pages than there are writers are in flight. A page in
        flight no longer counts in the list's fetch window: the next pages are fetched
        and parsed while it is written (at most `list_page_writers` pages more in memory).
        """
        writers = self._page_writers
        assert writers is not None
        written = writers.submit(lambda: self._write_page(resource, page, listing))
        if page.consumed is not None:
            page.consumed.release()
        self._in_flight.append(_InFlight(page, listing, written))
        while self._in_flight and (
            self._in_flight[0].written.done()
            or len(self._in_flight) > self._settings.list_page_writers
        ):
            self._take_in_oldest()

    def _take_in_oldest(self) -> None:
        oldest = self._in_flight.popleft()
        self._take_in(oldest.page.resource, oldest.page, oldest.listing, oldest.written.result())

    def _take_in_flight(self) -> None:
        """Every page in flight, written and taken in, in order; the first failure raises
        once every page has finished (a list that fails leaves no page still writing)."""
        failure: BaseException | None = None
        while self._in_flight:
            try:
                self._take_in_oldest()
            except BaseException as exc:
                failure = failure or exc
        if failure is not None:
            raise failure

    def _stop_page_writers(self) -> None:
        writers, self._page_writers = self._page_writers, None
        try:
            self._take_in_flight()
        finally:
            if writers is not None:
                writers.close()

    def _finish_list(self, done: ListDone) -> None:
        self._stop_page_writers()
        self.flush()
        resource = done.resource
        listing = self._listings.pop(resource.sync, None)
        keep = listing.seen if listing is not None else set()
        keep |= {key for (sync, key) in self.accounts.waiting if sync is resource.sync}
        if listing is not None and listing.statistics.stale_at_end():
            refresh_statistics_of(resource.kind)
        mirrored = set(listing.stored) if listing is not None else self._mirrored(resource)
        self.report.add(
            resource.sync, "removed", remove_objects(self.cluster, resource.kind, mirrored - keep)
        )
        state.record_list(
            self.cluster,
            resource.sync,
            resource_version=done.resource_version,
            count=len(keep),
            at=_at(done.started_at),
        )

    # Events ---------------------------------------------------------------------------

    def flush(self) -> None:
        """Apply buffered events, bookmarks and waiting objects in one transaction."""
        waiting = [
            w for w in self.accounts.take_waiting() if not self._superseded(w.resource, w.obj)
        ]
        if not self._buffer and not self._bookmarks and not waiting:
            return
        self._take_in_flight()  # a list's pages before the events that follow them
        self._last_flush = time.time()
        events, bookmarks = list(self._buffer.values()), dict(self._bookmarks)
        self._buffer.clear()
        self._bookmarks.clear()
        self._oldest = None
        retry = [WatchEvent(w.resource, "MODIFIED", w.obj, w.since) for w in waiting]
        with transaction.atomic():
            outcomes = [(r, self._apply_events(r, events + retry)) for r in SYNC_ORDER]
        committed = time.time()
        for _, (resource, applied, objects) in outcomes:
            if resource is not None:
                self._settle(resource, applied, objects)
        self.accounts.give_up_waiting()
        self._record_progress(events, bookmarks, committed)
        if self._on_flush is not None:
            self._on_flush(events, committed)

    def _superseded(self, resource: Resource, obj: dict[str, Any]) -> bool:
        return (resource.sync, object_key(resource.kind, obj)) in self._buffer

    def _apply_events(
        self, sync: SyncResource, events: list[WatchEvent]
    ) -> tuple[Resource | None, Applied, list[dict[str, Any]]]:
        mine = [e for e in events if e.resource.sync is sync]
        if not mine:
            return None, Applied(), []
        resource = mine[0].resource
        upserts = [e.obj for e in mine if e.type != "DELETED"]
        deleted = {object_key(resource.kind, e.obj) for e in mine if e.type == "DELETED"}
        return resource, self._apply_safely(resource, upserts, deleted), upserts

    def _mirrored(self, resource: Resource) -> set[Key]:
        return mirrored_keys(self.cluster, resource.kind, api_group=resource.scope_group)

    def _apply_safely(
        self,
        resource: Resource,
        upserts: list[dict[str, Any]],
        deleted: set[Key],
    ) -> Applied:
        """One savepoint for the lot; if the database refuses it, one per object. (A
        flush holds every collection's events in one transaction, hence the savepoint.)"""
        try:
            with transaction.atomic():
                return self._apply(resource, upserts, deleted)
        except _CONNECTION_ERRORS:
            raise
        except DatabaseError:
            self._warn_batch_failed(resource)
        refused: list[Refusal] = []
        applied = self._apply_one_by_one(resource, upserts, deleted, refused)
        self._record_refusals(refused)
        return applied

    def _record_refusals(self, refused: list[Refusal]) -> None:
        for resource, key, exc in refused:
            self.accounts.database_refused(resource, key, exc)

    def _apply_one_by_one(
        self,
        resource: Resource,
        upserts: list[dict[str, Any]],
        deleted: set[Key],
        refused: list[Refusal],
    ) -> Applied:
        """Each object in a savepoint of its own: one bad row costs one sync error
        (added to `refused`, for the caller to account for)."""
        applied = Applied()
        for obj in upserts:
            try:
                with transaction.atomic():
                    merge(applied, self._apply(resource, [obj], set()))
            except _CONNECTION_ERRORS:
                raise
            except DatabaseError as exc:
                refused.append((resource, object_key(resource.kind, obj), exc))
        with transaction.atomic():
            return merge(applied, delete_objects(self.cluster, resource, deleted))

    def _warn_batch_failed(self, resource: Resource) -> None:
        logger.warning(
            "%s %s: a batch failed; retrying object by object",
            self.cluster.name,
            resource.sync.value,
        )

    def _apply(
        self, resource: Resource, upserts: list[dict[str, Any]], deleted: set[Key]
    ) -> Applied:
        """Versions are read from the mirror here, for these objects only."""
        applied = apply_objects(self.cluster, resource, upserts, timezone.now())
        return merge(applied, delete_objects(self.cluster, resource, deleted))

    def _settle(self, resource: Resource, applied: Applied, objects: list[dict[str, Any]]) -> None:
        # Only objects waiting for their Node are looked up by key.
        kind = resource.kind
        by_key = {object_key(kind, obj): obj for obj in objects} if applied.missing_node else {}
        self.accounts.settle(resource, applied, by_key)

    def _record_progress(
        self, events: list[WatchEvent], bookmarks: dict[SyncResource, Bookmark], committed: float
    ) -> None:
        """Per collection: events applied, last resourceVersion, freshness and lag."""
        for sync in SYNC_ORDER:
            mine = [e for e in events if e.resource.sync is sync]
            bookmark = bookmarks.get(sync)
            if not mine and bookmark is None:
                continue
            self.report.add(sync, "events", len(mine))
            last = max(mine, key=lambda e: e.received_at) if mine else None
            rv = (last.obj.get("metadata") or {}).get("resourceVersion", "") if last else ""
            if bookmark is not None and (last is None or bookmark.received_at >= last.received_at):
                rv = bookmark.resource_version
            state.record_applied(
                self.cluster,
                sync,
                events=len(mine),
                resource_version=str(rv),
                last_event_at=_at(last.received_at) if last else None,
                last_bookmark_at=_at(bookmark.received_at) if bookmark else None,
                lag_seconds=committed - min(e.received_at for e in mine) if mine else None,
            )
