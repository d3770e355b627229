"""A full list fetched in a thread of its own and applied in the caller's thread.

While the caller writes page n, the thread asks for page n+1, waits for the API server
and decodes the JSON, so the server's time and the database's time overlap instead of
adding up. At most `depth` pages wait to be applied, which bounds memory. The thread
never touches the database; it only hands messages over, in the order the server sent
them.
"""

from __future__ import annotations

import queue
import threading
from collections.abc import Callable

from topology.sync.lister import Lister, Sink
from topology.sync.messages import Message
from topology.sync.resources import Resource

MakeLister = Callable[[Sink, threading.Event, int], Lister]
_POLL = 0.2  # seconds between looks at the session's stop flag while waiting


class _End:
    """The fetching thread is done: its result (or exception) is ready."""


def list_ahead(
    resource: Resource,
    make_lister: MakeLister,
    handle: Callable[[Message], None],
    session_stop: threading.Event,
    *,
    depth: int = 2,
) -> str:
    """List `resource` in a fetching thread; `handle` each message here, in order.

    Returns the list's resourceVersion; raises what `Lister.run` raised (ResourceGone,
    ListFailed, a non-transient error) or what `handle` raised, after stopping the thread.
    """
    inbox: queue.Queue[Message | _End] = queue.Queue()
    halt = threading.Event()
    lister = make_lister(inbox.put, halt, depth)
    outcome: dict[str, object] = {}

    def fetch() -> None:
        try:
            outcome["resource_version"] = lister.run(resource)
        except BaseException as exc:  # handed to the caller's thread
            outcome["error"] = exc
        finally:
            inbox.put(_End())

    thread = threading.Thread(target=fetch, name=f"list-{resource.sync.value}", daemon=True)
    thread.start()
    try:
        _apply_until_end(inbox, handle, session_stop, halt)
    finally:
        halt.set()  # if we leave early, the fetcher stops at its next page
        thread.join(timeout=_POLL * 5)
    if "error" in outcome:
        raise outcome["error"]  # type: ignore[misc]
    return str(outcome["resource_version"])


def _apply_until_end(
    inbox: queue.Queue[Message | _End],
    handle: Callable[[Message], None],
    session_stop: threading.Event,
    halt: threading.Event,
) -> None:
    while True:
        try:
            message = inbox.get(timeout=_POLL)
        except queue.Empty:
            if session_stop.is_set():
                halt.set()  # the fetcher raises ListFailed("stopped") and ends
            continue
        if isinstance(message, _End):
            return
        handle(message)
