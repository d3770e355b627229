"""A full list of one collection, page by page, retried with backoff.

Pages go to a sink as they arrive, so a 100,000-pod list never sits in memory whole.
A transient failure retries the same page; an expired `continue` token (410) restarts
the list, and the first page of the new run says so, so that reconciliation only
trusts one consistent snapshot.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable

from kubernetes.client.exceptions import ApiException

from topology.sync.backoff import Backoff, delay_for, is_transient
from topology.sync.client import ClusterClient, Page
from topology.sync.errors import ResourceGone, describe
from topology.sync.messages import Failure, ListDone, ListPage, Message, Recovered
from topology.sync.resources import Resource
from topology.sync.settings import SyncSettings

logger = logging.getLogger(__name__)
Sink = Callable[[Message], None]


class ListFailed(RuntimeError):
    """The list did not complete within its attempts (or the session stopped)."""


class Lister:
    def __init__(
        self,
        client: ClusterClient,
        settings: SyncSettings,
        sink: Sink,
        stop: threading.Event,
        *,
        cluster_name: str,
        max_attempts: int | None,
        pages_in_flight: int | None = None,
    ) -> None:
        self._client = client
        self._settings = settings
        self._sink = sink
        self._stop = stop
        self._cluster_name = cluster_name
        self._max_attempts = max_attempts
        # In a watcher thread the writer consumes pages later; bound how many wait.
        self._in_flight = threading.Semaphore(pages_in_flight) if pages_in_flight else None

    def run(self, resource: Resource) -> str:
        """List everything; returns the list's resourceVersion to watch from."""
        backoff = Backoff(self._settings.backoff_initial, self._settings.backoff_ceiling)
        token, restarted, started_at, failing = "", True, time.time(), False
        limit: int | None = self._settings.page_size
        while True:
            if self._stop.is_set():
                raise ListFailed(f"{resource.sync.value}: stopped")
            try:
                page = self._client.list_page(resource, limit=limit, continue_token=token)
            except ApiException as exc:
                if exc.status == 404:
                    raise ResourceGone(resource.sync) from exc
                if exc.status == 410 and token:
                    # client-go's pager: the continuation expired while we were paging
                    # (a list slower than the server's compaction); a paged list started
                    # over could expire again and again, so list everything at once
                    logger.info(
                        "%s %s: list continuation expired; listing again, in one request",
                        self._cluster_name,
                        resource.sync.value,
                    )
                    token, restarted, started_at, limit = "", True, time.time(), None
                    continue
                failing = self._pause(resource, exc, backoff)
                continue
            except Exception as exc:
                if not is_transient(exc):
                    raise
                failing = self._pause(resource, exc, backoff)
                continue
            if failing:
                self._sink(Recovered(resource))
                failing = False
            backoff.reset()
            self._deliver(resource, page, restarted, started_at)
            restarted, token = False, page.continue_token
            if not token:
                self._sink(ListDone(resource, page.resource_version, started_at))
                return page.resource_version

    def _deliver(self, resource: Resource, page: Page, restarted: bool, started_at: float) -> None:
        if self._in_flight is not None:
            # Wait for the writer to take a page, but not past a stop: a writer that
            # gave up will never take it.
            while not self._in_flight.acquire(timeout=0.2):
                if self._stop.is_set():
                    raise ListFailed(f"{resource.sync.value}: stopped")
        self._sink(ListPage(resource, page.items, restarted, started_at, self._in_flight))

    def _pause(self, resource: Resource, exc: Exception, backoff: Backoff) -> bool:
        """Report the failure, then wait; raise when out of attempts or stopped."""
        message = describe(exc)
        logger.warning("%s %s: list failed: %s", self._cluster_name, resource.sync.value, message)
        self._sink(Failure(resource, message))
        if self._max_attempts is not None and (
            not is_transient(exc) or backoff.attempts + 1 >= self._max_attempts
        ):
            raise ListFailed(f"{resource.sync.value}: {message}")
        if self._stop.wait(delay_for(exc, backoff)):
            raise ListFailed(f"{resource.sync.value}: stopped while retrying")
        return True
