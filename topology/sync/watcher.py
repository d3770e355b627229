"""One thread per collection: watch from a resourceVersion, forever, without losing an event.

- BOOKMARK events carry no object; their resourceVersion is remembered (and reported,
  since it proves the mirror current up to then).
- 410 Expired (as an HTTP status or an ERROR event) means the server no longer holds
  the history since our resourceVersion: list again (the writer reconciles, so a
  delete missed meanwhile is not lost) and watch from the new list.
- A stream that ends or breaks is resumed from the last resourceVersion seen.
- 5xx, 429 and connection errors back off exponentially with jitter and a ceiling.

The thread never touches the database: it hands messages to the writer's queue.
"""

from __future__ import annotations

import logging
import threading
import time
from typing import Any

from kubernetes.client.exceptions import ApiException

from topology.sync.backoff import Backoff, delay_for, is_transient
from topology.sync.client import ClusterClient
from topology.sync.errors import ResourceGone, describe
from topology.sync.lister import Lister, ListFailed, Sink
from topology.sync.messages import Bookmark, Failure, Recovered, WatchEvent
from topology.sync.resources import Resource
from topology.sync.settings import SyncSettings

logger = logging.getLogger(__name__)


class Expired(Exception):
    """The watch's resourceVersion is too old (410 Gone / Expired)."""


class Watcher(threading.Thread):
    def __init__(
        self,
        client: ClusterClient,
        resource: Resource,
        resource_version: str,
        settings: SyncSettings,
        sink: Sink,
        stop: threading.Event,
        *,
        cluster_name: str,
    ) -> None:
        super().__init__(name=f"watch-{cluster_name}-{resource.sync.value}", daemon=True)
        self.resource = resource
        self.resource_version = resource_version
        self.relists = 0
        self._client = client
        self._settings = settings
        self._sink = sink
        self._halt = stop
        self._cluster = cluster_name
        self._backoff = Backoff(settings.backoff_initial, settings.backoff_ceiling)
        self._failing = False

    def run(self) -> None:
        try:
            if not self.resource_version:  # its list failed earlier: list before watching
                self._relist()
            while not self._halt.is_set():
                self._watch_once()
        except ResourceGone:
            self._sink(Failure(self.resource, "no longer served; skipped until the next resync"))
        except ListFailed:
            pass  # only when stopping

    def _watch_once(self) -> None:
        started, events = time.monotonic(), 0
        try:
            for event in self._client.watch(self.resource, self.resource_version):
                events += 1
                self._handle(event)
                if self._halt.is_set():
                    return
            self._healthy()  # the server ended the stream: resume from where we are
            if not events and time.monotonic() - started < 1.0:
                # An empty stream that ends at once would spin: pause as after an error.
                self._halt.wait(self._backoff.next_delay())
        except Expired:
            self._relist()
        except ApiException as exc:
            if exc.status == 410:
                self._relist()
            elif exc.status == 404:
                raise ResourceGone(self.resource.sync) from exc
            else:
                self._pause(exc)
        except Exception as exc:
            if self._halt.is_set():
                return  # the session interrupted the stream
            if not is_transient(exc):
                logger.exception("%s %s: watch failed", self._cluster, self.resource.sync.value)
            self._pause(exc)

    def _handle(self, event: dict[str, Any]) -> None:
        kind, obj = event.get("type"), event.get("object") or {}
        if kind == "ERROR":
            if obj.get("code") == 410:
                raise Expired()
            raise status_error(obj)
        rv = str((obj.get("metadata") or {}).get("resourceVersion", ""))
        self._healthy()
        if kind == "BOOKMARK":
            self._sink(Bookmark(self.resource, rv, time.time()))
        elif kind in ("ADDED", "MODIFIED", "DELETED"):
            obj.setdefault("apiVersion", self.resource.api_version)
            obj.setdefault("kind", self.resource.object_kind)
            self._sink(WatchEvent(self.resource, kind, obj, time.time()))
        if rv:
            self.resource_version = rv

    def _relist(self) -> None:
        """List again until it works (or the session stops): a relist that fails in a way
        the lister does not retry (a body that does not decode, say) is recorded and
        retried after a pause, as the reflector's ListAndWatch is, so the collection
        never silently stops being synced."""
        logger.info("%s %s: watch expired; listing again", self._cluster, self.resource.sync.value)
        while True:
            self.relists += 1
            try:
                self.resource_version = self._lister().run(self.resource)
            except (ListFailed, ResourceGone):
                raise
            except Exception as exc:
                if self._halt.is_set():
                    raise ListFailed(f"{self.resource.sync.value}: stopped") from exc
                logger.exception("%s %s: list failed", self._cluster, self.resource.sync.value)
                self._pause(exc)
                continue
            self._healthy()
            return

    def _lister(self) -> Lister:
        return Lister(
            self._client,
            self._settings,
            self._sink,
            self._halt,
            cluster_name=self._cluster,
            max_attempts=None,
            pages_in_flight=2,
        )

    def _healthy(self) -> None:
        self._backoff.reset()
        if self._failing:
            self._failing = False
            self._sink(Recovered(self.resource))

    def _pause(self, exc: BaseException) -> None:
        message = describe(exc)
        logger.warning("%s %s: watch failed: %s", self._cluster, self.resource.sync.value, message)
        self._failing = True
        self._sink(Failure(self.resource, message))
        self._halt.wait(delay_for(exc, self._backoff))


def status_error(status: dict[str, Any]) -> ApiException:
    """A watch ERROR event's Status as the client raises an HTTP error, its
    details.retryAfterSeconds as the Retry-After header (RetryWatcher reads it)."""
    error = ApiException(status=int(status.get("code") or 500), reason=status.get("reason"))
    retry_after = (status.get("details") or {}).get("retryAfterSeconds")
    if isinstance(retry_after, int) and not isinstance(retry_after, bool) and retry_after > 0:
        error.headers = {"Retry-After": str(retry_after)}
    return error
