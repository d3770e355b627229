"""A list fetched in a thread of its own: messages reach the writer in order, and the
fetching thread stops when the writer fails or the session stops."""

from __future__ import annotations

import threading
import time

import pytest

from tests.sync.fakekube import write_kubeconfig
from topology.choices import ConnectionMode
from topology.sync.client import ClusterClient, Credentials
from topology.sync.errors import ResourceGone
from topology.sync.lister import Lister, ListFailed
from topology.sync.messages import ListDone, ListPage
from topology.sync.prefetch import list_ahead
from topology.sync.resources import PODS


class ScriptedLister:
    """Sends `pages` pages (waiting for each to be consumed, as Lister does), then ListDone."""

    def __init__(self, sink, halt: threading.Event, depth: int, pages: int = 5, fail=None):
        self.sink, self.halt, self.pages, self.fail = sink, halt, pages, fail
        self.in_flight = threading.Semaphore(depth)
        self.stopped = threading.Event()

    def run(self, resource) -> str:
        try:
            for index in range(self.pages):
                if self.fail is not None and index == 2:
                    raise self.fail
                while not self.in_flight.acquire(timeout=0.05):
                    if self.halt.is_set():
                        raise ListFailed("stopped")
                self.sink(ListPage(resource, [{"n": index}], index == 0, 0.0, self.in_flight))
            self.sink(ListDone(resource, "42", 0.0))
            return "42"
        finally:
            self.stopped.set()


def make(listers: list, **options):
    def make_lister(sink, halt, depth):
        lister = ScriptedLister(sink, halt, depth, **options)
        listers.append(lister)
        return lister

    return make_lister


def consume(seen: list):
    def handle(message) -> None:
        seen.append(message)
        if isinstance(message, ListPage):
            message.consumed.release()

    return handle


def test_pages_reach_the_writer_in_order_and_the_list_version_is_returned():
    seen: list = []
    version = list_ahead(PODS, make([]), consume(seen), threading.Event())
    assert version == "42"
    assert [m.items[0]["n"] for m in seen if isinstance(m, ListPage)] == [0, 1, 2, 3, 4]
    assert isinstance(seen[-1], ListDone)


def test_a_failing_writer_stops_the_fetching_thread():
    listers: list = []

    def handle(message) -> None:
        raise RuntimeError("database down")

    with pytest.raises(RuntimeError, match="database down"):
        list_ahead(PODS, make(listers, pages=50), handle, threading.Event(), depth=1)
    assert listers[0].stopped.wait(2), "the fetching thread went on"


def test_what_the_lister_raises_is_raised_to_the_caller():
    with pytest.raises(ResourceGone):
        list_ahead(PODS, make([], fail=ResourceGone(PODS.sync)), consume([]), threading.Event())


def test_stopping_the_session_stops_a_list_waiting_for_the_writer():
    stop = threading.Event()
    listers: list = []

    def slow_handle(message) -> None:  # never releases its page: the fetcher waits
        stop.set()

    started = time.monotonic()
    with pytest.raises(ListFailed, match="stopped"):
        list_ahead(PODS, make(listers, pages=50), slow_handle, stop, depth=1)
    assert time.monotonic() - started < 3


@pytest.mark.django_db
def test_a_lister_waiting_for_its_pages_to_be_taken_stops_when_asked(fake, fast, tmp_path):
    stop = threading.Event()
    kubeconfig = write_kubeconfig(tmp_path / "kubeconfig", fake)
    client = ClusterClient.connect(Credentials(ConnectionMode.KUBECONFIG, kubeconfig), fast)
    taken: list = []
    lister = Lister(
        client, fast, taken.append, stop, cluster_name="t", max_attempts=2, pages_in_flight=1
    )
    threading.Timer(0.3, stop.set).start()
    try:
        with pytest.raises(ListFailed, match="stopped"):
            lister.run(PODS)  # nobody takes the first page, so the second waits
    finally:
        client.close()
    assert len(taken) == 1


def test_pages_are_parsed_in_a_thread_of_their_own_and_reach_the_writer_in_order():
    seen: list = []
    parsed_in: set[str] = set()

    def prepare(resource, items):
        parsed_in.add(threading.current_thread().name)
        return {"n": items[0]["n"]}

    version = list_ahead(PODS, make([]), consume(seen), threading.Event(), prepare=prepare)
    assert version == "42"
    pages = [m for m in seen if isinstance(m, ListPage)]
    assert [m.parsed for m in pages] == [{"n": n} for n in range(5)]
    assert parsed_in == {f"parse-{PODS.sync.value}"}
    assert isinstance(seen[-1], ListDone)


def test_a_page_the_parsing_thread_could_not_parse_reaches_the_writer_unparsed():
    seen: list = []

    def prepare(resource, items):
        if items[0]["n"] == 1:
            raise TypeError("a parser bug")  # the writer parses it again and says so
        return {}

    list_ahead(PODS, make([]), consume(seen), threading.Event(), prepare=prepare)
    assert [m.parsed for m in seen if isinstance(m, ListPage)] == [{}, None, {}, {}, {}]


def test_a_failing_writer_stops_the_fetching_and_the_parsing_threads():
    listers: list = []

    def handle(message) -> None:
        raise RuntimeError("database down")

    before = {t.name for t in threading.enumerate()}
    with pytest.raises(RuntimeError, match="database down"):
        list_ahead(
            PODS,
            make(listers, pages=50),
            handle,
            threading.Event(),
            depth=1,
            prepare=lambda r, i: {},
        )
    assert listers[0].stopped.wait(2), "the fetching thread went on"
    deadline = time.monotonic() + 2
    while f"parse-{PODS.sync.value}" in {t.name for t in threading.enumerate()} - before:
        assert time.monotonic() < deadline, "the parsing thread went on"
        time.sleep(0.01)
