"""The apply task's body: send the audited body to the cluster, never over a newer change.

Every outcome finishes the audit row: `applied` (and the returned object goes into the
mirror at once), `conflict` (a 409, or an object that changed since Topolens read it:
nothing is written, the cluster's version is re-read into the mirror and kept on the
row beside ours), or `error` with the reason. The row is locked while the apply runs
and only a pending row is run, so a task delivered twice writes once.
"""

from __future__ import annotations

import copy
import logging
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from django.db import transaction
from django.utils import timezone
from kubernetes.client.exceptions import ApiException
from urllib3.exceptions import HTTPError

from topology.choices import ApplyStatus, WriteKind
from topology.models import ApplyRecord, Cluster, ClusterConnection
from topology.services.policies.writeback.mirror import mirror_object
from topology.services.sync.enqueue import enqueue_figures
from topology.sync.client import ClusterClient, credentials_of
from topology.sync.errors import SyncConnectError, describe
from topology.sync.settings import SyncSettings

logger = logging.getLogger(__name__)
TRANSPORT_ERRORS = (HTTPError, OSError, ValueError)
UNKNOWN_OUTCOME = "the write may or may not have reached the cluster; the next sync shows it"


@dataclass
class Result:
    status: ApplyStatus
    message: str
    sent: dict[str, Any] | None = None  # the body sent, when it differs from the planned one
    theirs: dict[str, Any] | None = None  # on a conflict: the cluster's version
    resource_version_after: str = ""


Writer = Callable[[ClusterClient, ApplyRecord, Cluster], Result]


def run_apply(*, record_id: int) -> ApplyRecord | None:
    """Run one pending apply; a row that is gone or already finished is left alone."""
    with transaction.atomic():
        record = (
            ApplyRecord.objects.select_for_update(of=("self",))
            .select_related("cluster")
            .filter(pk=record_id)
            .first()
        )
        if record is None or record.status != ApplyStatus.PENDING:
            return record
        try:
            result = _attempt(record)
        except Exception as exc:  # the audit row must never stay pending
            logger.exception("apply %s failed unexpectedly", record.pk)
            result = Result(
                ApplyStatus.ERROR, f"internal error ({type(exc).__name__}); {UNKNOWN_OUTCOME}"
            )
        _finish(record, result)
    logger.info(
        "apply %s %s on %s: %s", record.kind, record.object_name, record.cluster_name, record.status
    )
    return record


def _attempt(record: ApplyRecord) -> Result:
    cluster = record.cluster
    if cluster is None:
        return Result(ApplyStatus.ERROR, "the cluster was deleted; nothing was written")
    connection = ClusterConnection.objects.filter(cluster=cluster).first()
    if connection is None:
        return Result(ApplyStatus.ERROR, f"{cluster.name} has no connection; nothing was written")
    try:
        client = ClusterClient.connect(credentials_of(connection), SyncSettings.load())
    except SyncConnectError as exc:
        return Result(ApplyStatus.ERROR, f"{exc}; nothing was written")
    try:
        return WRITERS[WriteKind(record.kind)](client, record, cluster)
    except ApiException as exc:  # a read before the write failed: nothing was sent
        return Result(ApplyStatus.ERROR, f"{describe(exc)}; nothing was written")
    except TRANSPORT_ERRORS as exc:
        return Result(ApplyStatus.ERROR, f"{describe(exc)}; {UNKNOWN_OUTCOME}")
    finally:
        client.close()


def _finish(record: ApplyRecord, result: Result) -> None:
    record.status = result.status
    record.message = result.message
    record.finished_at = timezone.now()
    record.resource_version_after = result.resource_version_after
    record.cluster_version = result.theirs
    if result.sent is not None:
        record.patch = result.sent
    record.save()
    if result.status == ApplyStatus.APPLIED and record.kind == WriteKind.NODE_POLICY:
        enqueue_figures(record.cluster_id)  # a node's policy labels change what fits on it


# Writers, one per kind -------------------------------------------------------------------


def write_node_policy(client: ClusterClient, record: ApplyRecord, cluster: Cluster) -> Result:
    """The merge patch carries metadata.resourceVersion: the server refuses it (409) if
    the node changed since the mirror saw it."""
    name = record.object_name
    try:
        stored = client.patch_node(name, record.patch)
    except ApiException as exc:
        if exc.status != 409:
            return Result(ApplyStatus.ERROR, f"{describe(exc)}; nothing was written")
        reason = (
            f"node {name} changed in the cluster since resourceVersion "
            f"{record.resource_version_before}; nothing was overwritten"
        )
        return _conflict(cluster, record, lambda: client.read_node(name), reason)
    return _applied(cluster, record, stored)


def write_qos_config(client: ClusterClient, record: ApplyRecord, cluster: Cluster) -> Result:
    """Read first: a ConfigMap changed since the draft began is never replaced. Then PUT
    at the draft's base version, so a change in between still gets a 409."""
    namespace, name = record.object_name.split("/", 1)
    current = client.read_config_map(namespace, name)
    base, now = record.resource_version_before, _version(current)
    if now != base:
        reason = (
            f"the ConfigMap changed in the cluster since the draft began (resourceVersion "
            f"{base} → {now}); nothing was written"
        )
        return _conflict(cluster, record, lambda: current, reason)
    body = replacement_config_map(current, record.patch)
    try:
        stored = client.replace_config_map(namespace, name, body)
    except ApiException as exc:
        if exc.status != 409:
            return Result(ApplyStatus.ERROR, f"{describe(exc)}; nothing was written", sent=body)
        reason = f"the ConfigMap changed in the cluster after resourceVersion {base}"
        reason += "; nothing was written"
        result = _conflict(cluster, record, lambda: client.read_config_map(namespace, name), reason)
        result.sent = body
        return result
    result = _applied(cluster, record, stored)
    result.sent = body
    return result


def write_reservation(client: ClusterClient, record: ApplyRecord, cluster: Cluster) -> Result:
    """POST create; 409 AlreadyExists means the name is taken: nothing is written."""
    name, api_version = record.object_name, str(record.patch.get("apiVersion", ""))
    try:
        stored = client.create_reservation(record.patch)
    except ApiException as exc:
        if exc.status != 409:
            return Result(ApplyStatus.ERROR, f"{describe(exc)}; nothing was written")
        reason = f"a Reservation named {name} already exists in the cluster; nothing was written"
        return _conflict(
            cluster, record, lambda: client.read_reservation(name, api_version), reason
        )
    return _applied(cluster, record, stored)


WRITERS: dict[WriteKind, Writer] = {
    WriteKind.NODE_POLICY: write_node_policy,
    WriteKind.QOS_CONFIG: write_qos_config,
    WriteKind.RESERVATION: write_reservation,
}


def replacement_config_map(current: dict[str, Any], planned: dict[str, Any]) -> dict[str, Any]:
    """The ConfigMap as read, with the draft's data and the base resourceVersion.
    managedFields are left out: on an update the server then keeps its own."""
    body = copy.deepcopy(current)
    metadata = body.setdefault("metadata", {})
    metadata.pop("managedFields", None)
    metadata["resourceVersion"] = planned["metadata"]["resourceVersion"]
    body["data"] = dict(planned.get("data") or {})
    body.setdefault("apiVersion", "v1")
    body.setdefault("kind", "ConfigMap")
    return body


# Outcomes ----------------------------------------------------------------------------------


def _applied(cluster: Cluster, record: ApplyRecord, stored: dict[str, Any]) -> Result:
    after = _version(stored)
    message = f"applied: resourceVersion {record.resource_version_before or '(new)'} → {after}"
    note = mirror_object(cluster, WriteKind(record.kind), stored)
    message += f"; {note}" if note else "; the mirror shows it"
    return Result(ApplyStatus.APPLIED, message, resource_version_after=after)


def _conflict(
    cluster: Cluster, record: ApplyRecord, read: Callable[[], dict[str, Any]], reason: str
) -> Result:
    """Re-read the object into the mirror, and keep it to show beside ours."""
    try:
        theirs = read()
    except ApiException as exc:
        return Result(ApplyStatus.CONFLICT, f"{reason}; re-reading it failed: {describe(exc)}")
    except TRANSPORT_ERRORS as exc:
        return Result(ApplyStatus.CONFLICT, f"{reason}; re-reading it failed: {describe(exc)}")
    note = mirror_object(cluster, WriteKind(record.kind), theirs)
    message = f"{reason}; " + (note or "the mirror now shows the cluster's version")
    return Result(ApplyStatus.CONFLICT, message, theirs=shown_version(record.kind, theirs))


def shown_version(kind: str, obj: dict[str, Any]) -> dict[str, Any]:
    """What the audit keeps of the cluster's object: for a node, the metadata a policy
    patch touches (its status is large and beside the point); otherwise the object."""
    if kind == WriteKind.NODE_POLICY:
        metadata = obj.get("metadata") or {}
        kept = {
            k: metadata[k]
            for k in ("name", "resourceVersion", "labels", "annotations")
            if k in metadata
        }
        return {"apiVersion": obj.get("apiVersion", "v1"), "kind": "Node", "metadata": kept}
    shown = copy.deepcopy(obj)
    (shown.get("metadata") or {}).pop("managedFields", None)
    return shown


def _version(obj: dict[str, Any]) -> str:
    return str((obj.get("metadata") or {}).get("resourceVersion") or "")
