"""A Warning `Event` about a pod that explains a placement failure → EventRecord.

Reads core/v1 Events (what the sync lists and `kubectl get events -A -o json` dumps)
and events.k8s.io/v1 ones, whose fields are named differently (`regarding`, `note`,
`deprecatedCount`, `series.count`, `eventTime`, `reportingController`). An Event is
ours only when it is about a Pod, of type Warning, with a tracked reason; any other
Event is not mirrored (`parse_event` returns None), as a Namespace is not.

The tracked reasons, and where upstream emits each as a Warning event on the pod:

- `FailedScheduling`: kube-scheduler's failure handler
  (`fwk.EventRecorder().Eventf(pod, nil, v1.EventTypeWarning, "FailedScheduling",
  "Scheduling", msg)`, pkg/scheduler/schedule_one.go). Every scheduler built on its
  framework reports with it: koord-scheduler (NodeNUMAResource, Reservation),
  scheduler-plugins' NodeResourceTopologyMatch, and crane-scheduler. Neither
  gocrane/crane-scheduler nor gocrane/crane records a pod event of its own (the former
  only reads Normal `Scheduled` events; the latter's Warnings are about its own CRDs
  and nodes, e.g. `AvoidanceTriggered`), so Crane's placement failures are these.
- `FailedScheduling-Reservation`: koord-scheduler, for a pod with a reservation
  affinity (`scheduling.koordinator.sh/reservation-affinity`) that failed to schedule,
  the message narrowed to the reservations (koordinator-sh/koordinator
  pkg/scheduler/frameworkext/eventhandlers/reservation_handler.go, PR #2063 "scheduler:
  add reservation level event"; named so that the event correlator does not merge it
  with `FailedScheduling`). Its reservation-level `FailedScheduling` is about the
  Reservation object, not a pod: the sync's field selector leaves it out. There is no
  `FailedReserve` or `ReservationFailed` event in either project (`ReservationFailed`
  is Koordinator's Reservation phase constant, "Failed").
- `TopologyAffinityError` (topologymanager.ErrorTopologyAffinity),
  `UnexpectedAdmissionError` (lifecycle.UnexpectedAdmissionError) and `OutOf<resource>`
  (`fmt.Sprintf("OutOf%s", re.ResourceName)` in pkg/kubelet/lifecycle/predicate.go:
  OutOfcpu, OutOfmemory, OutOfnvidia.com/gpu…): the kubelet's admission refusals,
  recorded by `Kubelet.rejectPod` as a Warning event before it fails the pod.

A message is kept up to MESSAGE_LIMIT characters, so that one event (a scheduler's
message lists every node's reason) cannot bloat its row.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from django.utils.dateparse import parse_datetime

from topology.domain.pod_phases import ADMISSION_REJECTIONS, OUT_OF_RESOURCE
from topology.parsers.fields import Reader

WARNING = "Warning"
# the schedulers' failures, and the kubelet's admission refusals (`pod_phases`; with its
# `OutOf<resource name>` ones)
TRACKED_REASONS = frozenset(
    {"FailedScheduling", "FailedScheduling-Reservation", *ADMISSION_REJECTIONS}
)
MESSAGE_LIMIT = 4000
SOURCE_LIMIT = 253  # PodEvent.source
REASON_LIMIT = 128  # PodEvent.reason, as the events API limits it
EVENTS_API = "events.k8s.io/"


@dataclass(frozen=True)
class EventRecord:
    namespace: str
    name: str
    uid: str
    resource_version: str
    pod_name: str
    pod_uid: str
    reason: str
    message: str
    source: str
    count: int
    first_seen: datetime | None
    last_seen: datetime | None


def is_tracked_reason(reason: str) -> bool:
    """A reason that explains why a pod was not placed, or was refused where it was."""
    return reason in TRACKED_REASONS or (
        reason.startswith(OUT_OF_RESOURCE) and len(reason) > len(OUT_OF_RESOURCE)
    )


@dataclass(frozen=True)
class _Names:
    """Where one API version keeps each field (core/v1 or events.k8s.io/v1)."""

    regarding: str
    message: str
    count: str
    first: str
    last: str


_CORE = _Names("involvedObject", "message", "count", "firstTimestamp", "lastTimestamp")
_EVENTS_API = _Names(
    "regarding", "note", "deprecatedCount", "deprecatedFirstTimestamp", "deprecatedLastTimestamp"
)


def parse_event(obj: Any) -> EventRecord | None:
    """The record of a tracked Warning event about a pod; None for any other Event."""
    reader = Reader(obj, "Event")
    names = _names_of(reader)
    reader.get(names.regarding, dict)  # every Event is about some object
    regarding = reader.at(names.regarding)
    if not _is_ours(reader, regarding.get("kind", str, default="")):
        return None
    metadata = reader.at("metadata")
    first_seen, last_seen = _seen(reader, names)
    return EventRecord(
        namespace=metadata.get("namespace", str, default="default"),
        name=metadata.get("name", str),
        uid=metadata.get("uid", str, default=""),
        resource_version=metadata.get("resourceVersion", str, default=""),
        pod_name=regarding.get("name", str),
        pod_uid=regarding.get("uid", str, default=""),
        reason=_reason(reader),
        message=reader.get(names.message, str, default="")[:MESSAGE_LIMIT],
        source=_source(reader)[:SOURCE_LIMIT],
        count=_count(reader, names),
        first_seen=first_seen,
        last_seen=last_seen,
    )


def _names_of(reader: Reader) -> _Names:
    api_version = reader.get("apiVersion", str, default="v1")
    return _EVENTS_API if api_version.startswith(EVENTS_API) else _CORE


def _is_ours(reader: Reader, kind: str) -> bool:
    """About a Pod, a Warning, with a tracked reason (the sync's field selector already
    asks for the first two; a dump holds every Event)."""
    if kind != "Pod" or reader.get("type", str, default="") != WARNING:
        return False
    return is_tracked_reason(reader.get("reason", str, default=""))


def _reason(reader: Reader) -> str:
    """Refused beyond 128 characters (an `OutOf<resource>` of a very long resource name):
    a reason is what events are grouped by, so it is never cut."""
    reason = str(reader.get("reason", str))
    if len(reason) > REASON_LIMIT:
        raise reader.error("reason", f"longer than {REASON_LIMIT} characters")
    return reason


def _seen(reader: Reader, names: _Names) -> tuple[datetime | None, datetime | None]:
    """First and last seen: the old-style timestamps, else when the event (or its
    series, for the last) was observed, else when the Event object was created."""
    happened = _time(reader, "eventTime") or _time(reader, "metadata.creationTimestamp")
    first = _time(reader, names.first) or happened
    last = _time(reader, names.last) or _time(reader, "series.lastObservedTime") or happened
    return first, last


def _count(reader: Reader, names: _Names) -> int:
    """How many times it happened: the series' count (events written through the events
    API, as kube-scheduler's are), else the old-style count, else once."""
    for path in ("series.count", names.count):
        count = reader.get(path, int, default=0)
        if count < 0:
            raise reader.error(path, f"a count cannot be negative, got {count}")
        if count:
            return count
    return 1


def _source(reader: Reader) -> str:
    """The component that wrote it, and its host, as `kubectl get events` shows them
    (`kubelet, node-1`; `default-scheduler`)."""
    component = _first_string(
        reader,
        (
            "source.component",
            "reportingController",
            "reportingComponent",
            "deprecatedSource.component",
        ),
    )
    host = _first_string(reader, ("source.host", "deprecatedSource.host"))
    return ", ".join(part for part in (component, host) if part)


def _first_string(reader: Reader, paths: tuple[str, ...]) -> str:
    """The first of these fields that holds a non-empty string ("" when none does)."""
    for path in paths:
        value = reader.get(path, str, default="")
        if value:
            return str(value)
    return ""


def _time(reader: Reader, path: str) -> datetime | None:
    """An RFC 3339 time (MicroTime too); None when absent or null."""
    raw = reader.get(path, str, default=None)
    if raw is None:
        return None
    try:
        value = parse_datetime(raw)
    except ValueError:  # well formed, out of range (a 25th hour)
        value = None
    if value is None:
        raise reader.error(path, f"{raw!r} is not an RFC 3339 time")
    return value
