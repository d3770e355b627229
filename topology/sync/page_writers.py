"""List pages written by threads of their own, each on a database connection of its own.

A page's write is a chain of statements that each wait for PostgreSQL (COPY, then the
commit, which checks every new row's foreign keys); the writer thread can do nothing
else meanwhile. With pages written by two threads on two connections, PostgreSQL works
on one page while the next is prepared, and on two pages at once when it has the cores.
On the sync benchmark (5,000 nodes, 100,000 pods, PostgreSQL on the same two cores) a
cold resync took 13.2 s instead of 14.7 s (means of four interleaved runs each).

Safe because the pages of one list hold distinct objects, so no two of these
transactions write the same row (they queue briefly on the cluster's mirror version,
which each bumps just before it commits). The writer keeps everything else in order:
it takes the pages' results in the order the server sent the pages, and waits for every
page in flight before anything that must follow them (watch events, the end of the
list). It writes this way only on PostgreSQL, and only when its own connection holds no
open transaction: other connections could not see what such a transaction wrote.
"""

from __future__ import annotations

import logging
import queue
import threading
from collections.abc import Callable
from concurrent.futures import Future
from typing import Any, TypeVar

from django.db import DatabaseError, connection

logger = logging.getLogger(__name__)
T = TypeVar("T")
_Job = tuple[Callable[[], Any], Future[Any]]


def can_write_in_parallel() -> bool:
    """PostgreSQL, and no transaction open on this thread's connection."""
    return connection.vendor == "postgresql" and not connection.in_atomic_block


class PageWriters:
    """`count` threads that run jobs in the order given, each on its own connection,
    with commits that do not wait for the disk (as the session's own, see
    `writer.relaxed_commits`). `close` waits for the jobs and closes the connections."""

    def __init__(self, count: int, name: str = "sync-page-writer") -> None:
        self._jobs: queue.Queue[_Job | None] = queue.Queue()
        self._threads = [
            threading.Thread(target=self._run, name=f"{name}-{n}", daemon=True)
            for n in range(count)
        ]
        for thread in self._threads:
            thread.start()

    def submit(self, job: Callable[[], T]) -> Future[T]:
        """Run `job` in a writer thread; its result or exception comes in the future."""
        future: Future[T] = Future()
        self._jobs.put((job, future))
        return future

    def close(self) -> None:
        for _ in self._threads:
            self._jobs.put(None)
        for thread in self._threads:
            thread.join()

    def _run(self) -> None:
        try:
            _relax_commits()
            while (item := self._jobs.get()) is not None:
                job, future = item
                try:
                    future.set_result(job())
                except BaseException as exc:  # handed to the writer, which raises it
                    future.set_exception(exc)
        finally:
            connection.close()


def _relax_commits() -> None:
    try:
        with connection.cursor() as cursor:
            cursor.execute("SET synchronous_commit TO OFF")
    except DatabaseError:  # the first job meets the same error and reports it
        logger.debug("could not relax commits on a page writer's connection", exc_info=True)
