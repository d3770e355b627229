"""Request handling of the fake API server: routing, lists, watches, writes."""

from __future__ import annotations

import base64
import bisect
import json
import socket
import time
from http.server import BaseHTTPRequestHandler
from typing import TYPE_CHECKING, Any
from urllib.parse import parse_qs, urlsplit

from . import selectors
from .store import AlreadyExists, Collection, Conflict, Key, as_version
from .stream import WatchStream
from .wire import Request, status_body

if TYPE_CHECKING:
    from .server import FakeKubeServer


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    # Headers and body go out as separate writes: without this, Nagle's algorithm and
    # the client's delayed ACK add 40 ms to every response.
    disable_nagle_algorithm = True

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002
        pass  # tests read fake.requests instead

    @property
    def fake(self) -> FakeKubeServer:
        return self.server.fake  # type: ignore[attr-defined,no-any-return]

    def do_GET(self) -> None:  # noqa: N802
        self._serve("GET")

    def do_PATCH(self) -> None:  # noqa: N802
        self._serve("PATCH")

    def do_PUT(self) -> None:  # noqa: N802
        self._serve("PUT")

    def do_POST(self) -> None:  # noqa: N802
        self._serve("POST")

    def do_DELETE(self) -> None:  # noqa: N802
        self._serve("DELETE")

    # Dispatch ---------------------------------------------------------------------------

    def _serve(self, method: str) -> None:
        parts = urlsplit(self.path)
        path = parts.path.rstrip("/") or "/"
        query = {k: v[0] for k, v in parse_qs(parts.query).items()}
        body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        content_type = self.headers.get("Content-Type") or ""
        self.fake.record(Request(method, path, query, time.monotonic(), body, content_type))
        if self.fake.faults.take_refusal():
            self.abort()
            return
        if self.headers.get("Authorization") != f"Bearer {self.fake.token}":
            self._send(401, status_body(401, "Unauthorized", "Unauthorized"))
            return
        is_watch = _flag(query.get("watch"))
        injected = self.fake.faults.take_status(is_watch, path)
        if injected is not None:
            self._send(injected, status_body(injected, "InternalError", "injected failure"))
            return
        if self.fake.faults.take_garbled(is_watch, path):
            self._send(200, b"<html>502 Bad Gateway</html>")
            return
        try:
            self._route(method, path, query, body, is_watch)
        except selectors.BadSelector as exc:
            self._send(400, status_body(400, "BadRequest", str(exc)))

    def _route(
        self, method: str, path: str, query: dict[str, str], body: bytes, is_watch: bool
    ) -> None:
        segments = path.strip("/").split("/")
        discovery = self._discovery(segments)
        if discovery is not None:
            self._send(200, json.dumps(discovery).encode())
            return
        target = self._target(segments)
        if target is None:
            self._send(404, status_body(404, "NotFound", "the server could not find it"))
            return
        collection, version, namespace, name = target
        if method == "GET" and not name:
            (self._watch if is_watch else self._list)(collection, version, namespace, query)
        elif method == "GET":
            self._get(collection, version, (namespace, name))
        elif method in ("PATCH", "PUT") and name:
            self._write(method, collection, version, (namespace, name), body)
        elif method == "POST" and not name:
            self._create(collection, version, namespace, body)
        else:
            self._send(405, status_body(405, "MethodNotAllowed", f"{method} is not served here"))

    def _discovery(self, segments: list[str]) -> dict[str, Any] | None:
        cluster = self.fake.cluster
        groups = {c.group: c for c in cluster.collections.values() if c.group}
        if segments == ["api"]:
            return {"kind": "APIVersions", "versions": ["v1"], "serverAddressByClientCIDRs": []}
        if segments == ["api", "v1"]:
            return _resource_list("v1", [c for c in cluster.collections.values() if not c.group])
        if segments == ["apis"]:
            return {
                "kind": "APIGroupList",
                "apiVersion": "v1",
                "groups": [_group(c) for c in groups.values()],
            }
        if len(segments) == 2 and segments[0] == "apis" and segments[1] in groups:
            return {"kind": "APIGroup", "apiVersion": "v1", **_group(groups[segments[1]])}
        if len(segments) == 3 and segments[0] == "apis":
            group, version = segments[1], segments[2]
            served = [
                c
                for c in cluster.collections.values()
                if c.group == group and version in c.versions
            ]
            return _resource_list(f"{group}/{version}", served) if served else None
        return None

    def _target(self, segments: list[str]) -> tuple[Collection, str, str, str] | None:
        if segments[:2] == ["api", "v1"] and len(segments) > 2:
            group, version, rest = "", "v1", segments[2:]
        elif segments[0] == "apis" and len(segments) > 3:
            group, version, rest = segments[1], segments[2], segments[3:]
        else:
            return None
        namespace = ""
        if rest[0] == "namespaces" and len(rest) >= 3:
            namespace, rest = rest[1], rest[2:]
        collection = self.fake.cluster.collections.get((group, rest[0]))
        if collection is None or version not in collection.versions or len(rest) > 2:
            return None
        if namespace and not collection.namespaced:
            return None
        return collection, version, namespace, rest[1] if len(rest) == 2 else ""

    # Reads ------------------------------------------------------------------------------

    def _list(
        self, collection: Collection, version: str, namespace: str, query: dict[str, str]
    ) -> None:
        cluster = self.fake.cluster
        terms = selectors.parse(query.get("fieldSelector", ""))
        limit = int(query.get("limit") or 0)
        items: list[bytes] = []
        with cluster.cond:
            snapshot, start = _decode_continue(query.get("continue", ""), cluster.rv)
            if snapshot < cluster.compacted_at:
                message = (
                    "The provided continue parameter is too old to display a consistent list "
                    "result."
                )
                self._send(410, status_body(410, "Expired", message))
                return
            keys = cluster.sorted_keys(collection.id)
            index = bisect.bisect_right(keys, start) if start else 0
            while index < len(keys) and not (limit and len(items) >= limit):
                key = keys[index]
                index += 1
                obj = cluster.objects[collection.id][key]
                if (namespace and key[0] != namespace) or (
                    terms and not selectors.matches(obj, terms)
                ):
                    continue
                items.append(
                    cluster.encoded(collection.id, key, version, typed=bool(collection.group))
                )
            token = _encode_continue(snapshot, keys[index - 1]) if index < len(keys) else ""
        api_version = f"{collection.group}/{version}" if collection.group else version
        head = json.dumps(
            {
                "kind": f"{collection.kind}List",
                "apiVersion": api_version,
                "metadata": {"resourceVersion": str(snapshot), "continue": token},
            }
        ).encode()
        self._send(200, head[:-1] + b',"items":[' + b",".join(items) + b"]}")

    def _get(self, collection: Collection, version: str, key: Key) -> None:
        obj = self.fake.cluster.get(collection.id, key)
        if obj is None:
            self._send(
                404, status_body(404, "NotFound", f'{collection.plural} "{key[1]}" not found')
            )
            return
        self._send(200, json.dumps(as_version(obj, collection.id, version, typed=True)).encode())

    def _write(
        self, method: str, collection: Collection, version: str, key: Key, body: bytes
    ) -> None:
        cluster = self.fake.cluster
        current = cluster.get(collection.id, key)
        if current is None:
            self._send(
                404, status_body(404, "NotFound", f'{collection.plural} "{key[1]}" not found')
            )
            return
        change = json.loads(body or b"{}")
        expect = str((change.get("metadata") or {}).get("resourceVersion") or "")
        new = _merge_patch(current, change) if method == "PATCH" else change
        new.setdefault("apiVersion", current["apiVersion"])
        new.setdefault("kind", current["kind"])
        try:
            stored = cluster.put(new, expect_rv=expect)
        except Conflict:
            message = (
                f'Operation cannot be fulfilled on {collection.plural} "{key[1]}": the object has '
                "been modified; please apply your changes to the latest version and try again"
            )
            self._send(409, status_body(409, "Conflict", message))
            return
        self._send(200, json.dumps(as_version(stored, collection.id, version, typed=True)).encode())

    def _create(self, collection: Collection, version: str, namespace: str, body: bytes) -> None:
        """POST to a collection: 201 with the stored object, 409 AlreadyExists if the name
        is taken. As the real server does, status is dropped (the status subresource) and
        creationTimestamp and generation are set."""
        obj = json.loads(body or b"{}")
        metadata = obj.get("metadata") if isinstance(obj.get("metadata"), dict) else {}
        name = str(metadata.get("name") or "")
        if not name:
            message = f'{collection.plural} "" is invalid: metadata.name: Required value: name '
            self._send(422, status_body(422, "Invalid", message + "or generateName is required"))
            return
        if namespace and metadata.get("namespace", namespace) != namespace:
            message = (
                "the namespace of the provided object does not match the namespace sent on "
                "the request"
            )
            self._send(400, status_body(400, "BadRequest", message))
            return
        if namespace:
            metadata["namespace"] = namespace
        group_plural = (
            f"{collection.plural}.{collection.group}" if collection.group else collection.plural
        )
        new = {**obj, "metadata": metadata}
        new.pop("status", None)
        new["apiVersion"] = f"{collection.group}/{version}" if collection.group else version
        new["kind"] = collection.kind
        metadata.update(creationTimestamp=_now_rfc3339(), generation=1)
        try:
            stored = self.fake.cluster.create(new)
        except AlreadyExists:
            details = {"name": name, "group": collection.group, "kind": collection.plural}
            message = f'{group_plural} "{name}" already exists'
            self._send(409, status_body(409, "AlreadyExists", message, details=details))
            return
        self._send(201, json.dumps(as_version(stored, collection.id, version, typed=True)).encode())

    # Watches ----------------------------------------------------------------------------

    def _watch(
        self, collection: Collection, version: str, namespace: str, query: dict[str, str]
    ) -> None:
        terms = selectors.parse(query.get("fieldSelector", ""))
        stream = WatchStream(self, collection, version, namespace, terms)
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        self.wfile.flush()
        self.fake.watch_opened(self.connection)
        try:
            stream.run(
                query.get("resourceVersion", ""),
                timeout=float(query.get("timeoutSeconds") or 1800),
                bookmarks=_flag(query.get("allowWatchBookmarks")),
            )
        except OSError:
            self.close_connection = True  # the client went away, or the stream was cut
        finally:
            self.fake.watch_closed(self.connection)

    # Plumbing ---------------------------------------------------------------------------

    def _send(self, status: int, data: bytes) -> None:
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def chunk(self, data: bytes) -> None:
        self.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))
        self.wfile.flush()

    def abort(self) -> None:
        self.close_connection = True
        try:
            self.connection.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass


def _now_rfc3339() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())


def _flag(value: str | None) -> bool:
    """Booleans in a query, read as Go's strconv.ParseBool does (the client sends "True")."""
    return (value or "").lower() in ("1", "t", "true")


def _group(collection: Collection) -> dict[str, Any]:
    versions = [
        {"groupVersion": f"{collection.group}/{v}", "version": v} for v in collection.versions
    ]
    return {"name": collection.group, "versions": versions, "preferredVersion": versions[0]}


def _resource_list(group_version: str, collections: list[Collection]) -> dict[str, Any]:
    return {
        "kind": "APIResourceList",
        "apiVersion": "v1",
        "groupVersion": group_version,
        "resources": [
            {
                "name": c.plural,
                "singularName": c.kind.lower(),
                "namespaced": c.namespaced,
                "kind": c.kind,
                "verbs": ["get", "list", "watch", "patch", "update"],
            }
            for c in collections
        ],
    }


def _encode_continue(snapshot: int, last: Key) -> str:
    return base64.urlsafe_b64encode(json.dumps([snapshot, list(last)]).encode()).decode()


def _decode_continue(token: str, current: int) -> tuple[int, Key | None]:
    if not token:
        return current, None
    snapshot, last = json.loads(base64.urlsafe_b64decode(token))
    return int(snapshot), (last[0], last[1])


def _merge_patch(target: Any, patch: Any) -> Any:
    """RFC 7386 JSON merge patch (what a strategic merge patch does to maps)."""
    if not isinstance(patch, dict):
        return patch
    result = dict(target) if isinstance(target, dict) else {}
    for key, value in patch.items():
        if value is None:
            result.pop(key, None)
        else:
            result[key] = _merge_patch(result.get(key), value)
    return result
