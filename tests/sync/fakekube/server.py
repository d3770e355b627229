"""A fake Kubernetes API server speaking the real HTTP wire format, on loopback.

It serves discovery (/api, /apis, group/version resource lists), lists with
resourceVersion and limit/continue, chunked watch streams (ADDED, MODIFIED, DELETED,
BOOKMARK, ERROR 410), GET of one object, PATCH of nodes and PUT of ConfigMaps with
409 on a stale resourceVersion, POST create (201, 409 AlreadyExists), bearer-token
auth, and injected faults. Every request is recorded with its body, so tests can check
each one against the ClusterRole and see exactly what was written.
"""

from __future__ import annotations

import json
import socket
import sys
import threading
from http.server import ThreadingHTTPServer
from typing import Any

from .faults import Faults
from .handler import Handler
from .store import FakeCluster
from .wire import Request


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True
    fake: FakeKubeServer

    def handle_error(self, request: Any, client_address: Any) -> None:
        """Clients that hang up (tests cut streams on purpose) are not errors."""
        if not isinstance(sys.exc_info()[1], ConnectionError | OSError):
            super().handle_error(request, client_address)


class FakeKubeServer:
    def __init__(
        self,
        cluster: FakeCluster | None = None,
        *,
        token: str = "fake-token-s3cr3t",
        bookmark_interval: float = 0.3,
    ) -> None:
        self.cluster = cluster or FakeCluster()
        self.token = token
        self.bookmark_interval = bookmark_interval
        self.faults = Faults()
        self.requests: list[Request] = []
        self.stopping = threading.Event()
        self._lock = threading.Lock()
        self._open_watches: set[socket.socket] = set()
        self._httpd = _Server(("127.0.0.1", 0), Handler)
        self._httpd.fake = self
        self._thread = threading.Thread(
            target=self._httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )

    @property
    def url(self) -> str:
        host, port = self._httpd.server_address[:2]
        return f"http://{host}:{port}"

    def start(self) -> FakeKubeServer:
        self._thread.start()
        return self

    def stop(self) -> None:
        self.stopping.set()
        with self.cluster.cond:
            self.cluster.cond.notify_all()
        self.cut_watches()
        self._httpd.shutdown()
        self._httpd.server_close()

    def record(self, request: Request) -> None:
        with self._lock:
            self.requests.append(request)

    def requests_matching(self, method: str, path: str, **query: str) -> list[Request]:
        with self._lock:
            return [
                r
                for r in self.requests
                if r.method == method
                and r.path == path
                and all(r.query.get(k) == v for k, v in query.items())
            ]

    # Open watch streams, so a test can cut them all at once -----------------------------

    def watch_opened(self, sock: socket.socket) -> None:
        with self._lock:
            self._open_watches.add(sock)

    def watch_closed(self, sock: socket.socket) -> None:
        with self._lock:
            self._open_watches.discard(sock)

    def open_watch_count(self) -> int:
        with self._lock:
            return len(self._open_watches)

    def cut_watches(self) -> None:
        """Drop every open watch connection mid-stream (no terminating chunk)."""
        with self._lock:
            sockets = list(self._open_watches)
        for sock in sockets:
            try:
                sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass


def write_kubeconfig(
    path: Any, server: FakeKubeServer, *, context: str = "fake", token: str | None = None
) -> str:
    """A kubeconfig pointing at the fake server; returns its path as a string."""
    config = {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [{"name": context, "cluster": {"server": server.url}}],
        "users": [{"name": context, "user": {"token": token or server.token}}],
        "contexts": [{"name": context, "context": {"cluster": context, "user": context}}],
        "current-context": context,
    }
    path.write_text(json.dumps(config))
    return str(path)
