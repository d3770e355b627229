"""One sync of one cluster: discover, list every collection, then (optionally) watch.

`run_once` lists and returns. `run_watch` lists, then runs a watcher thread per
collection and applies their messages in this thread until the duration elapses, it
is stopped, or it loses its lease. A requested resync stops the watchers, drains their
messages, lists everything again in order, and watches from there.
"""

from __future__ import annotations

import logging
import queue
import threading
import time
from collections.abc import Callable
from functools import partial
from typing import Any

from topology.models import Cluster, ClusterConnection
from topology.services.mirror.removal import Key
from topology.services.mirror.writers.bulk import on_postgresql
from topology.sync import lease, state
from topology.sync.ahead import Parsed, parse_ahead
from topology.sync.backoff import Backoff, is_transient
from topology.sync.client import ClusterClient, Credentials
from topology.sync.discovery import SyncPlan, discover
from topology.sync.errors import ResourceGone, SyncConnectError, describe
from topology.sync.interpreter import tuned_for_full_lists
from topology.sync.lister import Lister, ListFailed, Sink
from topology.sync.messages import Message
from topology.sync.prefetch import list_ahead
from topology.sync.report import SyncReport
from topology.sync.resources import Resource
from topology.sync.settings import SyncSettings
from topology.sync.watcher import Watcher
from topology.sync.writer import FlushHook, MirrorWriter, relaxed_commits

logger = logging.getLogger(__name__)
AfterList = Callable[[int], None]
NOT_SERVED_ON_LIST = "no longer served (its list answered 404 Not Found)"


class ClusterSync:
    def __init__(
        self,
        cluster: Cluster,
        credentials: Credentials,
        settings: SyncSettings,
        *,
        owner: str = "",
        after_full_list: AfterList | None = None,
        on_flush: FlushHook | None = None,
    ) -> None:
        self.cluster = cluster
        self.report = SyncReport()
        self._credentials = credentials
        self._settings = settings
        self._owner = owner
        self._after_full_list = after_full_list
        self._writer = MirrorWriter(cluster, settings, self.report, on_flush=on_flush)
        self._stop = threading.Event()  # ends the session
        self._watch_stop = threading.Event()  # ends the current generation of watchers
        self._queue: queue.Queue[Message] = queue.Queue()
        self._client: ClusterClient | None = None
        self._plan = SyncPlan()
        self._next_renewal = 0.0

    def stop(self) -> None:
        """Ask a running session to end (thread-safe)."""
        self._stop.set()

    def run_once(self) -> SyncReport:
        """One full list of every served collection; raises SyncConnectError."""
        try:
            self._connect()
            with relaxed_commits():
                self._list_all({})
        finally:
            self._close()
        return self.report

    def run_watch(self, *, duration: float | None) -> SyncReport:
        """List, then watch until `duration` elapses or the session is stopped."""
        deadline = None if duration is None else time.monotonic() + duration
        try:
            self._connect()
            with relaxed_commits():
                self._list_then_watch(deadline)
        finally:
            self._close()
        return self.report

    def _list_then_watch(self, deadline: float | None) -> None:
        versions = self._list_all({})
        watchers = self._start_watchers(versions)
        # Housekeeping (lease, resync requests) every second, sooner with tiny settings.
        period = min(1.0, self._settings.flush_interval * 5)
        while not self._stop.is_set() and (deadline is None or time.monotonic() < deadline):
            until = time.monotonic() + period
            self._pump(until=until if deadline is None else min(until, deadline))
            self._renew_if_due()
            if self._owner and lease.take_resync_request(self.cluster.pk, self._owner):
                watchers = self._resync(watchers)
        self._stop_watchers(watchers)

    # Steps ----------------------------------------------------------------------------

    def _connect(self) -> None:
        """Load credentials and discover, retrying transient failures a few times."""
        try:
            self._client = ClusterClient.connect(self._credentials, self._settings)
            self._plan = self._discover(self._client)
        except SyncConnectError as exc:
            state.record_connect_failure(self.cluster, str(exc))
            raise
        served = {r.sync: r.api_version for r in self._plan.resources}
        state.plan_states(self.cluster, served, self._plan.skipped)
        self.report.versions.update({r.sync: r.version for r in self._plan.resources})
        self.report.not_served.update(self._plan.skipped)

    def _scheduler_configmap(self) -> str:
        """The ConfigMap the cluster's connection names (read afresh: an admin may have
        changed it since the session began)."""
        connection = ClusterConnection.objects.filter(cluster=self.cluster).first()
        return connection.scheduler_configmap if connection else ""

    def _discover(self, client: ClusterClient) -> SyncPlan:
        backoff = Backoff(self._settings.backoff_initial, self._settings.backoff_ceiling)
        while True:
            try:
                return discover(client, scheduler_configmap=self._scheduler_configmap())
            except Exception as exc:
                message = f"cannot reach the API server: {describe(exc)}"
                logger.warning("%s: %s", self.cluster.name, message)
                out_of_attempts = backoff.attempts + 1 >= self._settings.list_attempts
                if not is_transient(exc) or out_of_attempts:
                    raise SyncConnectError(message) from exc
                if self._stop.wait(backoff.next_delay()):
                    raise SyncConnectError("stopped while connecting") from exc

    def _list_all(self, versions: dict[Resource, str]) -> dict[Resource, str]:
        """List every collection in order (nodes first); returns resourceVersions to watch."""
        with tuned_for_full_lists():
            self._list_each(versions)
        self._writer.finish()
        if self._after_full_list is not None:
            self._after_full_list(self.cluster.pk)
        return versions

    def _list_each(self, versions: dict[Resource, str]) -> None:
        """List each served collection; record in `versions` where to watch it from."""
        row_texts = on_postgresql()
        for resource in self._plan.resources:
            stored = self._writer.begin_list(resource)
            prepare = partial(_parse_ahead, stored, row_texts=row_texts)
            try:
                versions[resource] = list_ahead(
                    resource, self._make_lister, self._handle, self._stop, prepare=prepare
                )
            except ResourceGone:
                # Discovery named it but its list is 404 (a CRD removed since, an API
                # turned off): not served, as a collection discovery leaves out.
                self._writer.abandon_list(resource)
                self.report.not_served[resource.sync] = NOT_SERVED_ON_LIST
                state.plan_states(self.cluster, {}, {resource.sync: NOT_SERVED_ON_LIST})
                versions.pop(resource, None)
            except ListFailed as exc:
                self._writer.abandon_list(resource)
                self.report.incomplete.append(str(exc))
                versions[resource] = ""  # its watcher lists it first

    def _make_lister(self, sink: Sink, stop: threading.Event, depth: int) -> Lister:
        assert self._client is not None
        return Lister(
            self._client,
            self._settings,
            sink,
            stop,
            cluster_name=self.cluster.name,
            max_attempts=self._settings.list_attempts,
            pages_in_flight=depth,
        )

    def _start_watchers(self, versions: dict[Resource, str]) -> list[Watcher]:
        assert self._client is not None
        watchers = [
            Watcher(
                self._client,
                resource,
                rv,
                self._settings,
                self._queue.put,
                self._watch_stop,
                cluster_name=self.cluster.name,
            )
            for resource, rv in versions.items()
        ]
        for watcher in watchers:
            watcher.start()
        return watchers

    def _pump(self, *, until: float) -> None:
        """Hand queued messages to the writer, flushing when a batch is due."""
        while time.monotonic() < until and not self._stop.is_set():
            try:
                self._handle(self._queue.get(timeout=self._settings.flush_interval / 2))
                # Take what else is waiting before deciding to flush, so that a backlog
                # becomes one batch rather than many small ones.
                for _ in range(self._settings.batch_size):
                    self._handle(self._queue.get_nowait())
            except queue.Empty:
                pass
            if self._writer.due():
                self._writer.flush()

    def _drain(self) -> None:
        while True:
            try:
                self._writer.handle(self._queue.get_nowait())
            except queue.Empty:
                break
        self._writer.flush()

    def _stop_watchers(self, watchers: list[Watcher]) -> None:
        self._watch_stop.set()
        assert self._client is not None
        self._client.interrupt_watches()
        for watcher in watchers:
            watcher.join(timeout=self._settings.connect_timeout + 5)
        self._drain()
        self._writer.finish()

    def _resync(self, watchers: list[Watcher]) -> list[Watcher]:
        logger.info("%s: full resync requested", self.cluster.name)
        self._stop_watchers(watchers)
        self._watch_stop = threading.Event()
        versions = self._list_all({})
        return self._start_watchers(versions)

    def _handle(self, message: Message) -> None:
        self._writer.handle(message)
        self._renew_if_due()

    def _renew_if_due(self) -> None:
        """Keep the lease while working; a session that lost it stops at once."""
        if not self._owner or time.monotonic() < self._next_renewal:
            return
        self._next_renewal = time.monotonic() + self._settings.lease_seconds / 3
        if not lease.renew(self.cluster.pk, self._owner, self._settings.lease_seconds):
            logger.warning("%s: lost the sync lease; stopping", self.cluster.name)
            self._stop.set()

    def _close(self) -> None:
        self._writer.close()
        if self._client is not None:
            self._client.close()


def _parse_ahead(
    stored: dict[Key, str],
    resource: Resource,
    items: list[dict[str, Any]],
    *,
    row_texts: bool,
) -> dict[Key, Parsed]:
    return parse_ahead(resource.kind, items, stored, row_texts=row_texts)
