"""One watch stream of the fake API server: replay, follow, bookmark, expire, drop."""

from __future__ import annotations

import json
import time
from typing import TYPE_CHECKING, Any

from . import selectors
from .store import Change, Collection, as_version

if TYPE_CHECKING:
    from .handler import Handler


class WatchStream:
    """One watch: replay history after the resourceVersion, then follow new changes."""

    def __init__(
        self,
        handler: Handler,
        collection: Collection,
        version: str,
        namespace: str,
        terms: list[Any],
    ) -> None:
        self.handler = handler
        self.fake = handler.fake
        self.cluster = handler.fake.cluster
        self.collection = collection
        self.version = version
        self.namespace = namespace
        self.terms = terms

    def run(self, rv: str, *, timeout: float, bookmarks: bool) -> None:
        faults = self.fake.faults
        if faults.take_hang(self.collection.plural):
            self.fake.stopping.wait(timeout=120)
            return
        drop_after = faults.take_drop(self.collection.plural)
        position = self._start(rv)
        deadline = time.monotonic() + timeout
        next_bookmark = time.monotonic() + self.fake.bookmark_interval
        sent = 0
        while not self.fake.stopping.is_set():
            with self.cluster.cond:
                if position < self.cluster.compacted_at:
                    expired = True
                else:
                    expired = False
                    changes = self.cluster.changes_after(self.collection.id, position)
                    current = self.cluster.rv
                    now = time.monotonic()
                    if not changes and now < deadline and not (bookmarks and now >= next_bookmark):
                        wake = min(deadline, next_bookmark if bookmarks else deadline)
                        self.cluster.cond.wait(max(0.0, wake - now))
                        continue
            if expired:
                self._send_expired(position)
                return
            for change in changes:
                event = self._event(change)
                if event is None:
                    continue
                if drop_after is not None and sent >= drop_after:
                    self.handler.abort()
                    return
                self.handler.chunk(json.dumps(event).encode() + b"\n")
                sent += 1
            # Everything up to `current` was looked at: the next scan starts there, not
            # at this collection's last change (which other collections' churn outruns).
            position = max(position, current)
            if bookmarks and time.monotonic() >= next_bookmark:
                self.handler.chunk(json.dumps(self._bookmark(position)).encode() + b"\n")
                next_bookmark = time.monotonic() + self.fake.bookmark_interval
            if time.monotonic() >= deadline:
                break
        self.handler.wfile.write(b"0\r\n\r\n")
        self.handler.wfile.flush()

    def _start(self, rv: str) -> int:
        if rv not in ("", "0"):
            return int(rv)
        with self.cluster.cond:  # "start at most recent": the current state as ADDED events
            current = self.cluster.rv
            objects = [
                o for o in self.cluster.objects[self.collection.id].values() if self._selected(o)
            ]
        for obj in objects:
            typed = as_version(obj, self.collection.id, self.version, typed=True)
            self.handler.chunk(json.dumps({"type": "ADDED", "object": typed}).encode() + b"\n")
        return current

    def _selected(self, obj: dict[str, Any] | None) -> bool:
        if obj is None:
            return False
        if self.namespace and obj["metadata"].get("namespace") != self.namespace:
            return False
        return not self.terms or selectors.matches(obj, self.terms)

    def _event(self, change: Change) -> dict[str, Any] | None:
        """Map a change to what this watch sees: objects leaving the selection are DELETED."""
        was = change.type != "ADDED" and self._selected(change.old)
        now = change.type != "DELETED" and self._selected(change.new)
        if was and now:
            kind = "MODIFIED"
        elif was:
            kind = "DELETED"
        elif now:
            kind = "ADDED"
        else:
            return None
        obj = as_version(change.new, self.collection.id, self.version, typed=True)
        return {"type": kind, "object": obj}

    def _bookmark(self, rv: int) -> dict[str, Any]:
        group = self.collection.group
        api_version = f"{group}/{self.version}" if group else self.version
        return {
            "type": "BOOKMARK",
            "object": {
                "kind": self.collection.kind,
                "apiVersion": api_version,
                "metadata": {"resourceVersion": str(rv)},
            },
        }

    def _send_expired(self, position: int) -> None:
        status = {
            "kind": "Status",
            "apiVersion": "v1",
            "metadata": {},
            "status": "Failure",
            "message": f"too old resource version: {position} ({self.cluster.compacted_at})",
            "reason": "Expired",
            "code": 410,
        }
        self.handler.chunk(json.dumps({"type": "ERROR", "object": status}).encode() + b"\n")
        self.handler.wfile.write(b"0\r\n\r\n")
        self.handler.wfile.flush()
