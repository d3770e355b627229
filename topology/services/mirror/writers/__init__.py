"""Write parsed records into the mirror, a batch of one kind per transaction.

The import and the live sync both write through `write_records`, so that an imported
and a synced mirror of the same objects are identical. Every writer compares each
record's content hash with the stored one first: an unchanged object writes nothing.
The single-record `upsert_*` helpers are batches of one.

A writer's transaction takes no savepoint of its own when it runs inside the caller's
(`atomic(savepoint=False)`): a failure fails the caller's transaction or savepoint,
which decides what to retry. That saves two round trips a batch.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping, Sequence
from datetime import datetime
from typing import Any

from topology.models import (
    Cluster,
    Node,
    NodeCPUReservation,
    NodeTopology,
    Pod,
    PodAllocation,
    PodEvent,
    Reservation,
    ResourceClaim,
    ResourceClaimDevice,
    ResourceSlice,
    ResourceSliceDevice,
    Zone,
    ZoneResource,
)
from topology.parsers import NAMESPACED_KINDS, MirroredKind, Record
from topology.parsers.event import EventRecord
from topology.parsers.node import NodeRecord
from topology.parsers.nrt import TopologyRecord
from topology.parsers.pod import PodRecord
from topology.parsers.qos_config import QoSConfigRecord
from topology.parsers.reservation import ReservationRecord
from topology.parsers.resource_slice import ResourceClaimRecord
from topology.services.mirror.hashing import EncodedRecord
from topology.services.mirror.version import bump_mirror_version
from topology.services.mirror.writers.bulk import refresh_statistics
from topology.services.mirror.writers.common import (
    POD_SOURCES,
    BatchResult,
    MissingNodeError,
    Outcome,
)
from topology.services.mirror.writers.dra import write_resource_claims, write_resource_slices
from topology.services.mirror.writers.events import write_pod_events
from topology.services.mirror.writers.nodes import write_nodes
from topology.services.mirror.writers.pods import mirrored_node_ids, write_pods
from topology.services.mirror.writers.qos import write_qos_configs
from topology.services.mirror.writers.reservations import write_reservations
from topology.services.mirror.writers.scheduler_configs import write_scheduler_configs
from topology.services.mirror.writers.topologies import write_topologies
from topology.services.sync.enqueue import enqueue_diagnosis

BatchWriter = Callable[[Cluster, Any, datetime], BatchResult]
BATCH_WRITERS: dict[MirroredKind, BatchWriter] = {
    MirroredKind.NODE: write_nodes,
    MirroredKind.TOPOLOGY: write_topologies,
    MirroredKind.POD: write_pods,
    MirroredKind.RESERVATION: write_reservations,
    MirroredKind.QOS_CONFIG: write_qos_configs,
    MirroredKind.SCHEDULER_CONFIG: write_scheduler_configs,
    MirroredKind.EVENT: write_pod_events,
    MirroredKind.RESOURCE_SLICE: write_resource_slices,
    MirroredKind.RESOURCE_CLAIM: write_resource_claims,
}


_TABLES = {
    MirroredKind.NODE: (Node, NodeCPUReservation),
    MirroredKind.TOPOLOGY: (NodeTopology, Zone, ZoneResource, PodAllocation),
    MirroredKind.POD: (Pod, PodAllocation),
    MirroredKind.RESERVATION: (Reservation,),
    MirroredKind.QOS_CONFIG: (),
    MirroredKind.SCHEDULER_CONFIG: (),
    MirroredKind.EVENT: (PodEvent,),
    MirroredKind.RESOURCE_SLICE: (ResourceSlice, ResourceSliceDevice),
    MirroredKind.RESOURCE_CLAIM: (ResourceClaim, ResourceClaimDevice),
}


def refresh_statistics_of(kind: MirroredKind) -> None:
    """After writing many rows of a kind at once (a first list): see bulk.refresh_statistics."""
    refresh_statistics(_TABLES[kind])


def write_records(
    cluster: Cluster,
    kind: MirroredKind,
    records: Sequence[Record],
    now: datetime,
    *,
    absent: Collection[tuple[str, ...]] = (),
    encodings: Mapping[tuple[str, ...], EncodedRecord] | None = None,
    node_ids: Mapping[str, int] | None = None,
) -> BatchResult:
    """Upsert records of one kind in one transaction; see BatchResult for keys and errors.

    `absent` (a set): keys the caller knows the mirror holds nothing of (a full list
    read what the mirror held when it began). The pod writer then skips looking them up
    and clearing their allocations: a cold resync saves two statements a page. Should
    the hint be wrong, the insert fails on a unique key and the caller retries without it.
    Other kinds ignore it (a few pages of them at most).

    `encodings` (key → the record's EncodedRecord), when the caller encoded the records
    already; the pod and NRT writers use it rather than hash them again. Its digest is
    what they store and compare; its fields need only be the JSON columns'
    (`POD_JSON_FIELDS`, `TOPOLOGY_JSON_FIELDS`; see `hashing.encode_columns`).

    `node_ids` (node name → id), when the caller read the cluster's Nodes already (a pod
    list reads them once, not once a page); the pod writer looks up only names it lacks.
    Should an id be stale (its Node deleted since), the foreign key fails the batch and
    the caller retries without it, as with `absent`.
    """
    if kind is MirroredKind.POD:
        result = write_pods(
            cluster,
            list(records),  # type: ignore[arg-type]
            now,
            absent=absent,
            encodings=encodings,
            node_ids=node_ids,
        )
    elif kind is MirroredKind.TOPOLOGY:
        result = write_topologies(cluster, list(records), now, encodings=encodings)  # type: ignore[arg-type]
    else:
        result = BATCH_WRITERS[kind](cluster, list(records), now)
    if result.written and kind is MirroredKind.EVENT:
        # Events feed only the diagnoses: the engine's snapshot (keyed by the mirror
        # version) does not read them, so they leave its caches alone.
        enqueue_diagnosis(cluster.pk)
    elif result.written:
        bump_mirror_version(cluster)
    return result


def record_key(kind: MirroredKind, record: Record) -> tuple[str, ...]:
    """The mirror's key of a record: (namespace, name) for pods, events and DRA claims,
    (name,) otherwise."""
    if kind in NAMESPACED_KINDS:
        assert isinstance(record, PodRecord | EventRecord | ResourceClaimRecord)
        return (record.namespace, record.name)
    return (record.name,)


def _single(kind: MirroredKind, cluster: Cluster, record: Record, now: datetime) -> Outcome:
    result = write_records(cluster, kind, [record], now)
    if result.errors:
        raise MissingNodeError(next(iter(result.errors.values())))
    return next(iter(result.outcomes.values()))


def upsert_node(cluster: Cluster, record: NodeRecord, now: datetime) -> Outcome:
    return _single(MirroredKind.NODE, cluster, record, now)


def upsert_topology(cluster: Cluster, record: TopologyRecord, now: datetime) -> Outcome:
    """Raises MissingNodeError when the NRT's Node is not mirrored."""
    return _single(MirroredKind.TOPOLOGY, cluster, record, now)


def upsert_pod(cluster: Cluster, record: PodRecord, now: datetime) -> Outcome:
    return _single(MirroredKind.POD, cluster, record, now)


def upsert_reservation(cluster: Cluster, record: ReservationRecord, now: datetime) -> Outcome:
    return _single(MirroredKind.RESERVATION, cluster, record, now)


def upsert_qos_config(cluster: Cluster, record: QoSConfigRecord, now: datetime) -> Outcome:
    return _single(MirroredKind.QOS_CONFIG, cluster, record, now)


__all__ = [
    "POD_SOURCES",
    "BatchResult",
    "MissingNodeError",
    "Outcome",
    "mirrored_node_ids",
    "record_key",
    "refresh_statistics_of",
    "upsert_node",
    "upsert_pod",
    "upsert_qos_config",
    "upsert_reservation",
    "upsert_topology",
    "write_records",
]
