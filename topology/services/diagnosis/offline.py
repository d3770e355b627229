"""Diagnosis facts straight from Kubernetes objects (`kubectl get ... -o json` dumps).

No database: the pods with their status, the events, the nodes and NRTs of the dump.
A malformed object is left out with an error naming it (`OfflineFacts.errors`), as the
importer does; it never stops the diagnosis of the others.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from scheduler_api.engine import SchedulerProfile
from topology.adapters import pod_spec_of, snapshot_from_objects
from topology.parsers import ObjectParseError, parse_object
from topology.parsers.event import EventRecord
from topology.parsers.node import NodeRecord
from topology.parsers.nrt import TopologyRecord
from topology.parsers.pod import PodRecord, parse_timestamp
from topology.selectors.events import fold_events
from topology.services.diagnosis.facts import ClusterFacts, EventFacts, NRTFacts, PodFacts


@dataclass
class OfflineFacts:
    facts: ClusterFacts
    errors: list[str] = field(default_factory=list)


@dataclass
class _Parsed:
    kept: list[dict[str, Any]] = field(default_factory=list)
    pods: list[PodFacts] = field(default_factory=list)
    events: list[EventRecord] = field(default_factory=list)
    nodes: set[str] = field(default_factory=set)
    nrts: list[tuple[TopologyRecord, datetime | None]] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)


def facts_from_objects(
    objects: Iterable[Any],
    *,
    profiles: tuple[SchedulerProfile, ...] = (),
    now: datetime | None = None,
) -> OfflineFacts:
    parsed = _parse(objects)
    taken = now or datetime.now(UTC)
    facts = ClusterFacts(
        snapshot=snapshot_from_objects(parsed.kept, taken_at=taken),
        pods=tuple(parsed.pods),
        events=tuple(dedupe_events(parsed.events)),
        nrts=tuple(_nrt_facts(r, at, parsed.nodes) for r, at in parsed.nrts),
        profiles=profiles,
        now=taken,
        data_age_seconds=None,  # a dump does not say when it was taken
    )
    return OfflineFacts(facts, parsed.errors)


def _parse(objects: Iterable[Any]) -> _Parsed:
    parsed = _Parsed()
    for obj in objects:
        try:
            item = parse_object(obj)
        except ObjectParseError as error:
            parsed.errors.append(str(error))
            continue
        if item is None:
            continue
        record = item.record
        if isinstance(record, EventRecord):
            parsed.events.append(record)
            continue
        parsed.kept.append(obj)
        if isinstance(record, PodRecord) and not record.finished:
            parsed.pods.append(pod_facts(record, pod_spec_of(record, obj)))
        elif isinstance(record, NodeRecord):
            parsed.nodes.add(record.name)
        elif isinstance(record, TopologyRecord):
            parsed.nrts.append((record, last_managed_time(obj)))
    return parsed


def pod_facts(record: PodRecord, spec: Any) -> PodFacts:
    return PodFacts(
        namespace=record.namespace,
        name=record.name,
        uid=record.uid,
        node_name=record.node_name,
        phase=record.phase,
        scheduler_name=record.scheduler_name,
        spec_source=spec,
        created_at=record.created_at,
        status=record.status,
        rejected=record.rejected,
    )


def _nrt_facts(record: TopologyRecord, updated_at: datetime | None, nodes: set[str]) -> NRTFacts:
    return NRTFacts(
        node_name=record.name,
        flavour=record.flavour,
        pods_fingerprint=record.pods_fingerprint,
        pods_fingerprint_method=record.pods_fingerprint_method,
        updated_at=updated_at,
        has_node=record.name in nodes,
    )


def last_managed_time(obj: dict[str, Any]) -> datetime | None:
    """When an object was last written, as far as its managedFields say."""
    metadata = obj.get("metadata")
    entries = metadata.get("managedFields") if isinstance(metadata, dict) else None
    listed = entries if isinstance(entries, list) else []
    times = [parse_timestamp(entry.get("time")) for entry in listed if isinstance(entry, dict)]
    known = [t for t in times if t is not None]
    return max(known) if known else None


def dedupe_events(records: Iterable[EventRecord]) -> list[EventFacts]:
    """One entry per pod and reason, as `kubectl get events` shows them (the mirror's
    own folding, `selectors.events.fold_events`): counts summed, the newest message and
    time; of two equally recent, the one later in the dump."""
    ordered = sorted(enumerate(records), key=_newest, reverse=True)
    folded = fold_events(dataclasses.asdict(record) for _, record in ordered)
    return [EventFacts.of(summary) for summary in folded.values()]


def _newest(item: tuple[int, EventRecord]) -> tuple[float, int]:
    index, record = item
    return (record.last_seen.timestamp() if record.last_seen else 0.0, index)
