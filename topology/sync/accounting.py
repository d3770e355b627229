"""After a batch commits: record bad objects, hold NRTs waiting for their Node, count.

Kept out of the writer so that the writer reads as the order of operations.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

from topology.choices import SyncResource
from topology.models import Cluster
from topology.services.mirror.removal import Key
from topology.sync import state
from topology.sync.apply import Applied, display_name
from topology.sync.report import SyncReport
from topology.sync.resources import Resource


@dataclass
class Waiting:
    """An object that needs a Node the mirror lacks; its Node's event may be on its way."""

    resource: Resource
    obj: dict[str, Any]
    since: float
    message: str


class Accounts:
    def __init__(self, cluster: Cluster, report: SyncReport, grace: float) -> None:
        self.cluster = cluster
        self.report = report
        self.grace = grace
        self.waiting: dict[tuple[SyncResource, Key], Waiting] = {}
        self._open_errors = state.open_error_names(cluster)

    def settle(self, resource: Resource, applied: Applied, objects: dict[Key, Any]) -> None:
        """Count one apply, record its bad objects, clear errors of objects now fine."""
        sync = resource.sync
        for key, exc in applied.bad.items():
            self._error(sync, key, exc.field, exc.message)
        for key, message in applied.missing_node.items():
            earlier = self.waiting.get((sync, key))
            since = earlier.since if earlier else time.time()
            self.waiting[(sync, key)] = Waiting(resource, objects[key], since, message)
        self.report.add(sync, "written", len(applied.written))
        self.report.add(sync, "removed", applied.removed)
        self.report.add(sync, "skipped", applied.skipped)
        open_errors = self._open_errors.get(sync)
        if not open_errors:  # the common case: no name to build for a page of 500
            return
        fixed = {display_name(k) for k in applied.written | applied.gone} & open_errors
        if fixed:
            state.clear_object_errors(self.cluster, sync, fixed)
            self._open_errors[sync] -= fixed

    def take_waiting(self) -> list[Waiting]:
        waiting = list(self.waiting.values())
        self.waiting.clear()
        return waiting

    def give_up_waiting(self, *, everything: bool = False) -> None:
        """Objects that waited past the grace period (or all, at the end) become errors."""
        now = time.time()
        for (sync, key), item in list(self.waiting.items()):
            if everything or now - item.since >= self.grace:
                del self.waiting[(sync, key)]
                self._error(sync, key, "metadata.name", item.message)

    def database_refused(self, resource: Resource, key: Key, exc: Exception) -> None:
        self._error(resource.sync, key, "", f"the database refused it ({type(exc).__name__})")

    def _error(self, sync: SyncResource, key: Key, field: str, message: str) -> None:
        name = display_name(key)
        self.report.add(sync, "errors")
        state.record_object_error(self.cluster, sync, name=name, field=field, message=message)
        self._open_errors.setdefault(sync, set()).add(name)
