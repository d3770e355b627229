"""Warning events about pods: which are mirrored, what is read of them, and what is
refused (the reasons and where upstream emits them: `topology.parsers.event`)."""

from __future__ import annotations

import copy
from datetime import UTC, datetime
from typing import Any

import pytest

from topology.parsers import MirroredKind, classify, object_key, parse_object
from topology.parsers.errors import ObjectParseError
from topology.parsers.event import MESSAGE_LIMIT, parse_event


def core_event(**changes: Any) -> dict[str, Any]:
    """A kube-scheduler FailedScheduling event as `kubectl get events -o json` shows it;
    `changes` replace top-level fields (None removes one)."""
    event: dict[str, Any] = {
        "apiVersion": "v1",
        "kind": "Event",
        "metadata": {
            "namespace": "team-a",
            "name": "web-0.17f1a2b3c4d5e6f7",
            "uid": "ev-uid-1",
            "resourceVersion": "412",
            "creationTimestamp": "2026-11-29T10:00:00Z",
        },
        "involvedObject": {
            "apiVersion": "v1",
            "kind": "Pod",
            "namespace": "team-a",
            "name": "web-0",
            "uid": "pod-uid-1",
        },
        "type": "Warning",
        "reason": "FailedScheduling",
        "message": "0/5 nodes are available: 5 Insufficient cpu.",
        "source": {"component": "default-scheduler"},
        "count": 3,
        "firstTimestamp": "2026-11-29T10:00:00Z",
        "lastTimestamp": "2026-11-29T10:04:00Z",
    }
    for key, value in changes.items():
        if value is None:
            event.pop(key, None)
        else:
            event[key] = value
    return event


def events_api_event() -> dict[str, Any]:
    """The same failure as events.k8s.io/v1 serves it (how kube-scheduler writes it)."""
    return {
        "apiVersion": "events.k8s.io/v1",
        "kind": "Event",
        "metadata": {"namespace": "team-a", "name": "web-0.17f1", "resourceVersion": "9"},
        "regarding": {"kind": "Pod", "namespace": "team-a", "name": "web-0", "uid": "p1"},
        "type": "Warning",
        "reason": "FailedScheduling",
        "note": "0/5 nodes are available: 5 node(s) didn't satisfy NUMA topology.",
        "eventTime": "2026-11-29T10:00:00.123456Z",
        "series": {"count": 7, "lastObservedTime": "2026-11-29T10:09:00.000000Z"},
        "reportingController": "default-scheduler",
        "reportingInstance": "default-scheduler-master-1",
        "action": "Scheduling",
    }


def at(text: str) -> datetime:
    return datetime.fromisoformat(text).replace(tzinfo=UTC)


def test_a_failed_scheduling_event_is_read_whole():
    record = parse_event(core_event())
    assert record is not None
    assert (record.namespace, record.name, record.uid) == (
        "team-a",
        "web-0.17f1a2b3c4d5e6f7",
        "ev-uid-1",
    )
    assert (record.pod_name, record.pod_uid, record.reason) == (
        "web-0",
        "pod-uid-1",
        "FailedScheduling",
    )
    assert record.message == "0/5 nodes are available: 5 Insufficient cpu."
    assert (record.source, record.count, record.resource_version) == ("default-scheduler", 3, "412")
    assert record.first_seen == at("2026-11-29T10:00:00")
    assert record.last_seen == at("2026-11-29T10:04:00")


def test_an_events_api_event_reads_its_own_field_names():
    record = parse_event(events_api_event())
    assert record is not None
    assert (record.pod_name, record.pod_uid) == ("web-0", "p1")
    assert record.message.endswith("didn't satisfy NUMA topology.")
    assert (record.count, record.source) == (7, "default-scheduler")
    assert record.first_seen == datetime(2026, 11, 29, 10, 0, 0, 123456, tzinfo=UTC)
    assert record.last_seen == at("2026-11-29T10:09:00")


TRACKED = [
    ("FailedScheduling", "default-scheduler"),
    ("FailedScheduling-Reservation", "koord-scheduler"),  # koordinator#2063
    ("TopologyAffinityError", "kubelet"),
    ("UnexpectedAdmissionError", "kubelet"),
    ("OutOfcpu", "kubelet"),
    ("OutOfmemory", "kubelet"),
    ("OutOfnvidia.com/gpu", "kubelet"),
]


@pytest.mark.parametrize(("reason", "component"), TRACKED)
def test_a_tracked_reason_is_mirrored(reason, component):
    event = core_event(reason=reason, source={"component": component, "host": "node-1"})
    parsed = parse_object(event)
    assert parsed is not None and parsed.kind is MirroredKind.EVENT
    assert parsed.record.reason == reason
    assert parsed.record.source == f"{component}, node-1"


UNTRACKED = {
    "a Normal event": {"type": "Normal", "reason": "Scheduled"},
    "a Normal event with a tracked reason": {"type": "Normal"},
    "another Warning": {"reason": "BackOff"},
    "a bare OutOf": {"reason": "OutOf"},
    "an event about a Node": {
        "involvedObject": {"kind": "Node", "name": "node-1"},
        "reason": "TopologyAffinityError",
    },
    "Koordinator's event about a Reservation": {
        "involvedObject": {"kind": "Reservation", "name": "r1"},
    },
    "made-up reservation reasons": {"reason": "FailedReserve"},
    "the Reservation phase, not a reason": {"reason": "ReservationFailed"},
}


@pytest.mark.parametrize("changes", UNTRACKED.values(), ids=UNTRACKED.keys())
def test_an_untracked_event_is_not_mirrored(changes):
    event = core_event(**changes)
    assert classify(event) is MirroredKind.EVENT
    assert parse_event(event) is None and parse_object(event) is None


def test_an_untracked_event_is_not_read_further():
    """Its other fields may be anything: it is not ours, so it is no error either."""
    assert parse_event(core_event(type="Normal", lastTimestamp="yesterday")) is None


MALFORMED = {
    "no name": ({"metadata": {"namespace": "team-a"}}, "metadata.name"),
    "no involvedObject": ({"involvedObject": None}, "involvedObject"),
    "involvedObject not an object": ({"involvedObject": "web-0"}, "involvedObject"),
    "no pod name": ({"involvedObject": {"kind": "Pod"}}, "involvedObject.name"),
    "a count that is text": ({"count": "3"}, "count"),
    "a negative count": ({"count": -1}, "count"),
    "a time that is no time": ({"lastTimestamp": "yesterday"}, "lastTimestamp"),
    "a time out of range": ({"firstTimestamp": "2026-11-29T25:00:00Z"}, "firstTimestamp"),
    "a message that is not text": ({"message": ["a", "b"]}, "message"),
    "a reason beyond 128 characters": ({"reason": "OutOf" + "x" * 124}, "reason"),
}


@pytest.mark.parametrize(("changes", "field"), MALFORMED.values(), ids=MALFORMED.keys())
def test_a_malformed_tracked_event_names_the_field_at_fault(changes, field):
    with pytest.raises(ObjectParseError) as caught:
        parse_object(core_event(**changes))
    assert caught.value.field == field and caught.value.kind == "Event"


def test_a_long_message_is_cut_to_the_bound():
    record = parse_event(core_event(message="node(s) didn't fit; " * 1000))
    assert record is not None and len(record.message) == MESSAGE_LIMIT


def test_count_and_times_fall_back_as_kubectl_reads_them():
    bare = core_event(count=None, firstTimestamp=None, lastTimestamp=None, source=None)
    record = parse_event(bare)
    assert record is not None
    assert record.count == 1 and record.source == ""
    assert record.first_seen == record.last_seen == at("2026-11-29T10:00:00")  # created
    timed = core_event(
        count=0, firstTimestamp=None, lastTimestamp=None, eventTime="2026-11-29T11:00:00.5Z"
    )
    record = parse_event(timed)
    assert record is not None and record.count == 1
    assert (
        record.first_seen
        == record.last_seen
        == datetime(2026, 11, 29, 11, 0, 0, 500000, tzinfo=UTC)
    )


def test_events_are_keyed_by_namespace_and_name():
    event = core_event()
    assert object_key(MirroredKind.EVENT, event) == ("team-a", "web-0.17f1a2b3c4d5e6f7")
    malformed = copy.deepcopy(event)
    malformed["count"] = "many"
    assert object_key(MirroredKind.EVENT, malformed) == ("team-a", "web-0.17f1a2b3c4d5e6f7")


def test_only_event_kinds_of_the_core_and_events_apis_are_events():
    assert classify(events_api_event()) is MirroredKind.EVENT
    assert classify(core_event(apiVersion="example.com/v1")) is None
