"""The official kubernetes client, wrapped for the sync.

- Client-side timeouts on every request: (connect, read). A watch's read timeout
  exceeds the server-side `timeoutSeconds`, so only a dead connection trips it.
- urllib3 retries are off: the sync's own backoff (with jitter and a ceiling) decides.
- Bodies are read raw (`_preload_content=False`) and decoded once (`decode_json`): the
  parsers want the wire format, and model objects would cost time and memory.
- Credentials stay inside the ApiClient; nothing here logs or repeats them.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import orjson
import yaml
from kubernetes import client as k8s
from kubernetes import config as k8s_config
from kubernetes.config.config_exception import ConfigException
from kubernetes.watch.watch import iter_resp_lines

from topology.choices import ConnectionMode
from topology.models import ClusterConnection
from topology.sync.errors import SyncConnectError
from topology.sync.resources import Resource
from topology.sync.settings import SyncSettings


@dataclass(frozen=True)
class Credentials:
    """Where to find credentials; `repr` leaves the path out so it never reaches a log."""

    mode: ConnectionMode
    kubeconfig_path: str = ""
    context: str = ""

    def __repr__(self) -> str:
        return f"Credentials(mode={self.mode.value!r})"


def credentials_of(connection: ClusterConnection) -> Credentials:
    return Credentials(
        ConnectionMode(connection.mode), connection.kubeconfig_path, connection.context
    )


@dataclass(frozen=True)
class APIGroup:
    name: str
    versions: tuple[str, ...]
    preferred: str


@dataclass(frozen=True)
class Page:
    items: list[dict[str, Any]]
    resource_version: str
    continue_token: str


def load_configuration(credentials: Credentials) -> k8s.Configuration:
    """A client Configuration from a kubeconfig (+ context) or the pod's service account."""
    configuration = k8s.Configuration()
    try:
        if credentials.mode == ConnectionMode.IN_CLUSTER:
            k8s_config.load_incluster_config(client_configuration=configuration)
        else:
            k8s_config.load_kube_config(
                config_file=credentials.kubeconfig_path,
                context=credentials.context or None,
                client_configuration=configuration,
                persist_config=False,
            )
    except (ConfigException, OSError, ValueError, TypeError, yaml.YAMLError):
        # `from None`: the loader's own message names the file and may quote its content
        raise SyncConnectError(
            "the cluster's credentials could not be loaded (kubeconfig or service account)"
        ) from None
    configuration.retries = False
    return configuration


class ClusterClient:
    """One cluster's API server: discovery, paged lists, watches and the two writes."""

    def __init__(self, configuration: k8s.Configuration, settings: SyncSettings) -> None:
        configuration.connection_pool_maxsize = 16  # a watch per collection, plus lists
        self._api = k8s.ApiClient(configuration)
        self._core = k8s.CoreV1Api(self._api)
        self._custom = k8s.CustomObjectsApi(self._api)
        self._settings = settings
        self._timeout = (settings.connect_timeout, settings.read_timeout)
        self._open_streams: set[Any] = set()
        self._lock = threading.Lock()

    @classmethod
    def connect(cls, credentials: Credentials, settings: SyncSettings) -> ClusterClient:
        return cls(load_configuration(credentials), settings)

    # Discovery ---------------------------------------------------------------

    def core_versions(self) -> list[str]:
        body = self._json(k8s.CoreApi(self._api).get_api_versions(**self._raw()))
        return [str(v) for v in body.get("versions", [])]

    def api_groups(self) -> list[APIGroup]:
        body = self._json(k8s.ApisApi(self._api).get_api_versions(**self._raw()))
        return [
            APIGroup(
                name=group["name"],
                versions=tuple(v["version"] for v in group.get("versions", [])),
                preferred=(group.get("preferredVersion") or {}).get("version", ""),
            )
            for group in body.get("groups", [])
        ]

    def resource_names(self, group: str, version: str) -> set[str]:
        body = self._json(self._custom.get_api_resources(group, version, **self._raw()))
        return {str(r.get("name", "")) for r in body.get("resources", [])}

    # Lists and watches -----------------------------------------------------------

    def list_page(self, resource: Resource, *, limit: int | None, continue_token: str = "") -> Page:
        """One page of a list; `limit` None lists the whole collection at once."""
        kwargs: dict[str, Any] = self._raw()
        if limit is not None:
            kwargs["limit"] = limit
        if continue_token:
            kwargs["_continue"] = continue_token
        body = self._json(self._collection_call(resource)(**kwargs))
        metadata = body.get("metadata") or {}
        items = [_with_type(item, resource) for item in body.get("items") or []]
        return Page(
            items=items,
            resource_version=str(metadata.get("resourceVersion", "")),
            continue_token=str(metadata.get("continue") or ""),
        )

    def watch(self, resource: Resource, resource_version: str) -> Iterator[dict[str, Any]]:
        """Raw watch events from `resource_version`, bookmarks included, until the server
        ends the stream. ERROR events are yielded as they come; the caller decides."""
        response = self._collection_call(resource)(
            watch=True,
            resource_version=resource_version,
            allow_watch_bookmarks=True,
            timeout_seconds=self._settings.watch_timeout,
            _preload_content=False,
            _request_timeout=(self._settings.connect_timeout, self._settings.watch_read_timeout),
        )
        with self._lock:
            self._open_streams.add(response)
        try:
            for line in iter_resp_lines(response):
                if line.strip():
                    yield decode_json(line)
        finally:
            with self._lock:
                self._open_streams.discard(response)
            response.release_conn()

    def interrupt_watches(self) -> None:
        """Unblock every watch stream now (from another thread), so a session stops fast."""
        with self._lock:
            streams = list(self._open_streams)
        for response in streams:
            try:
                response.shutdown()  # unblocks a read in progress in another thread
            except (ValueError, OSError):
                pass  # already shut down, or the socket is gone

    # Writes (used by the policy write-back) --------------------------------------

    def patch_node(self, name: str, patch: dict[str, Any]) -> dict[str, Any]:
        """Strategic-merge-patch a Node; a patch carrying metadata.resourceVersion fails
        with 409 when the node changed since it was read."""
        return self._json(self._core.patch_node(name, patch, **self._raw()))

    def replace_config_map(self, namespace: str, name: str, body: dict[str, Any]) -> dict[str, Any]:
        """PUT a ConfigMap; 409 when body's resourceVersion is stale."""
        return self._json(
            self._core.replace_namespaced_config_map(name, namespace, body, **self._raw())
        )

    def close(self) -> None:
        self.interrupt_watches()
        self._api.close()

    # Internals -----------------------------------------------------------------

    def _raw(self) -> dict[str, Any]:
        return {"_preload_content": False, "_request_timeout": self._timeout}

    def _collection_call(self, resource: Resource) -> Any:
        """The client method for a collection, with its path arguments bound."""
        selector = {"field_selector": resource.field_selector} if resource.field_selector else {}
        if resource.group:
            return lambda **kw: self._custom.list_cluster_custom_object(
                resource.group, resource.version, resource.plural, **selector, **kw
            )
        if resource.plural == "nodes":
            return lambda **kw: self._core.list_node(**selector, **kw)
        if resource.plural == "pods":
            return lambda **kw: self._core.list_pod_for_all_namespaces(**selector, **kw)
        if resource.plural == "events":
            return lambda **kw: self._core.list_event_for_all_namespaces(**selector, **kw)
        if resource.plural == "configmaps":
            return lambda **kw: self._core.list_namespaced_config_map(
                resource.namespace, **selector, **kw
            )
        raise ValueError(f"no client call for {resource.plural}")

    @staticmethod
    def _json(response: Any) -> dict[str, Any]:
        try:
            data = response.data
        finally:
            response.release_conn()
        body = decode_json(data)
        if not isinstance(body, dict):
            raise ValueError("the API server answered with something other than an object")
        return body

    # Reads of one object and the Reservation create (used by the write-back) ---------

    def read_node(self, name: str) -> dict[str, Any]:
        """GET one Node, TypeMeta included (the write-back re-syncs it on a conflict)."""
        return self._json(self._core.read_node(name, **self._raw()))

    def read_config_map(self, namespace: str, name: str) -> dict[str, Any]:
        return self._json(self._core.read_namespaced_config_map(name, namespace, **self._raw()))

    def create_reservation(self, body: dict[str, Any]) -> dict[str, Any]:
        """POST a Koordinator Reservation (cluster-scoped); 409 AlreadyExists if the name
        is taken. The group/version come from the body's apiVersion."""
        group, version = _group_version(body)
        return self._json(
            self._custom.create_cluster_custom_object(
                group, version, "reservations", body, **self._raw()
            )
        )

    def read_reservation(self, name: str, api_version: str) -> dict[str, Any]:
        group, version = _group_version({"apiVersion": api_version})
        return self._json(
            self._custom.get_cluster_custom_object(
                group, version, "reservations", name, **self._raw()
            )
        )


def decode_json(data: bytes | str) -> Any:
    """A response body or watch line, decoded.

    orjson decodes a list page several times faster than `json` (a cold resync decodes
    100,000 pods and 5,000 NRTs of 384 CPUs). What orjson refuses and `json` accepts
    (NaN, a lone surrogate escape, a body not in UTF-8) goes to `json`, so that no body
    decoded before is refused now. The two agree on everything else an API server
    sends; they would differ on an integer beyond 64 bits, which orjson reads as a float,
    but the API server (Go) never writes one: it holds JSON numbers as int64 or float64.
    """
    try:
        return orjson.loads(data)
    except orjson.JSONDecodeError:
        return json.loads(data)


def _group_version(body: dict[str, Any]) -> tuple[str, str]:
    group, _, version = str(body.get("apiVersion", "")).rpartition("/")
    if not group or not version:
        raise ValueError(f"not a group/version: {body.get('apiVersion')!r}")
    return group, version


def _with_type(item: dict[str, Any], resource: Resource) -> dict[str, Any]:
    """List items of built-in kinds come without apiVersion/kind; the parsers need them."""
    item.setdefault("apiVersion", resource.api_version)
    item.setdefault("kind", resource.object_kind)
    return item
