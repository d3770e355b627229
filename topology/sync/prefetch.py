"""A full list fetched in a thread of its own and applied in the caller's thread.

While the caller writes page n, the fetching thread asks for page n+1, waits for the
API server and decodes the JSON, so the server's time and the database's time overlap
instead of adding up. With `prepare` (parsing ahead, see `ahead`), a third thread works
on each page between the two: page n+1 is parsed while page n+2 is being fetched and
page n written, so the wait for the server overlaps the parsing too (a 500-pod page
takes the fake server of the benchmark as long to send as the sync to parse).

At most `depth` pages are between the fetching thread and the caller, being parsed or
waiting, which bounds memory. The threads never touch the database; they only hand
messages over, in the order the server sent them.
"""

from __future__ import annotations

import queue
import threading
from collections.abc import Callable
from dataclasses import replace
from typing import Any

from topology.sync.lister import Lister, Sink
from topology.sync.messages import ListPage, Message
from topology.sync.resources import Resource

MakeLister = Callable[[Sink, threading.Event, int], Lister]
Prepare = Callable[[Resource, list[dict[str, Any]]], dict[Any, Any]]
_POLL = 0.2  # seconds between looks at the session's stop flag while waiting


class _End:
    """The fetching thread is done: its result (or exception) is ready."""


Inbox = queue.Queue[Message | _End]


def list_ahead(
    resource: Resource,
    make_lister: MakeLister,
    handle: Callable[[Message], None],
    session_stop: threading.Event,
    *,
    depth: int = 2,
    prepare: Prepare | None = None,
) -> str:
    """List `resource` in a fetching thread; `handle` each message here, in order.

    `prepare(resource, items)`, when given, runs on each page in a thread of its own;
    its result reaches `handle` as the page's `parsed`. Returns the list's
    resourceVersion; raises what `Lister.run` raised (ResourceGone, ListFailed, a
    non-transient error) or what `handle` raised, after stopping the threads.
    """
    inbox: Inbox = queue.Queue()
    halt = threading.Event()
    outcome: dict[str, object] = {}
    threads = []
    if prepare is not None:
        fetched: Inbox = queue.Queue()
        threads.append(_thread(f"parse-{resource.sync.value}", _prepare, fetched, inbox, prepare))
    else:
        fetched = inbox
    lister = make_lister(fetched.put, halt, depth)
    threads.append(
        _thread(f"list-{resource.sync.value}", _fetch, lister, resource, fetched, outcome)
    )
    for thread in threads:
        thread.start()
    try:
        _apply_until_end(inbox, handle, session_stop, halt)
    finally:
        halt.set()  # if we leave early, the fetcher stops at its next page
        for thread in threads:
            thread.join(timeout=_POLL * 5)
    if "error" in outcome:
        raise outcome["error"]  # type: ignore[misc]
    return str(outcome["resource_version"])


def _thread(name: str, target: Callable[..., None], *args: Any) -> threading.Thread:
    return threading.Thread(target=target, args=args, name=name, daemon=True)


def _fetch(lister: Lister, resource: Resource, out: Inbox, outcome: dict[str, object]) -> None:
    try:
        outcome["resource_version"] = lister.run(resource)
    except BaseException as exc:  # handed to the caller's thread
        outcome["error"] = exc
    finally:
        out.put(_End())


def _prepare(fetched: Inbox, out: Inbox, prepare: Prepare) -> None:
    """Parse each page on its way, in order; pass everything else on as it is.

    It always ends: the fetching thread sends _End whatever happens. Should `prepare`
    fail (it returns parse errors, it does not raise them), the page goes on unparsed
    and the writer parses it itself.
    """
    while not isinstance(message := fetched.get(), _End):
        if isinstance(message, ListPage):
            message = replace(message, parsed=_parsed(prepare, message))
        out.put(message)
    out.put(message)


def _parsed(prepare: Prepare, page: ListPage) -> dict[Any, Any] | None:
    try:
        return prepare(page.resource, page.items)
    except Exception:  # the writer's own parse reports it
        return None


def _apply_until_end(
    inbox: Inbox,
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
