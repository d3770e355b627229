"""What the diagnosis reads, in one shape whether it comes from the mirror or a dump.

The engine's `ClusterSnapshot` already carries each node's zones, CPUs, reserved CPUs,
policies and the allocations its pods hold; `ClusterFacts` adds what only a diagnosis
needs: every pod with its status (Pending, rejected and running), the pods' warning
events, each NRT's published pod fingerprint and when it last changed, NRTs whose node
is gone, and when the data was taken. Plain values, no Django: the checks are tested on
them directly.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from functools import cached_property
from typing import Any

from scheduler_api.engine import ClusterSnapshot, PodSpec, SchedulerProfile


@dataclass(frozen=True)
class PodFacts:
    """One pod as the mirror knows it. `status` is `topology.parsers.pod.status_of`'s
    dict (reason, message, scheduled: the PodScheduled condition, containers)."""

    namespace: str
    name: str
    uid: str
    node_name: str  # "" while Pending
    phase: str
    scheduler_name: str
    spec: PodSpec  # what the engine judges (requests, QoS, annotations it reads)
    created_at: datetime | None = None
    status: Mapping[str, Any] = field(default_factory=dict)
    rejected: bool = False  # refused by the kubelet at admission (holds nothing)

    @property
    def key(self) -> str:
        return f"{self.namespace}/{self.name}"

    @property
    def pending(self) -> bool:
        return not self.node_name and self.phase == "Pending"


@dataclass(frozen=True)
class EventFacts:
    """A Warning event about a pod, deduplicated by pod and reason."""

    namespace: str
    pod_name: str
    reason: str
    message: str
    count: int = 1
    last_seen: datetime | None = None

    @classmethod
    def of(cls, summary: Any) -> EventFacts:
        """From `selectors.events.PodEventSummary` (the folding the mirror shows)."""
        return cls(
            summary.namespace,
            summary.pod_name,
            summary.reason,
            summary.message,
            summary.count,
            summary.last_seen,
        )


@dataclass(frozen=True)
class NRTFacts:
    """What an NRT publishes beyond the snapshot: its pod fingerprint and method
    (attributes `nodeTopologyPodsFingerprint`/`...Method`, else the legacy annotation),
    and when it last changed (the mirror's write time; a dump's managedFields time)."""

    node_name: str
    flavour: str
    pods_fingerprint: str = ""
    pods_fingerprint_method: str = ""
    updated_at: datetime | None = None
    has_node: bool = True


@dataclass(frozen=True)
class ClusterFacts:
    snapshot: ClusterSnapshot
    pods: tuple[PodFacts, ...] = ()
    events: tuple[EventFacts, ...] = ()
    nrts: tuple[NRTFacts, ...] = ()
    profiles: tuple[SchedulerProfile, ...] = ()
    now: datetime | None = None
    # when the mirror was last known equal to the cluster; None for a dump
    data_age_seconds: float | None = None
    stale_after_seconds: float = 300.0  # the cluster's freshness threshold

    def pods_on(self, node: str) -> list[PodFacts]:
        return [p for p in self.pods if p.node_name == node and not p.rejected]

    def events_of(self, pod: PodFacts) -> list[EventFacts]:
        return self._events_by_pod.get((pod.namespace, pod.name), [])

    @cached_property
    def _events_by_pod(self) -> dict[tuple[str, str], list[EventFacts]]:
        """The events by pod, indexed once: a diagnosis asks for them pod after pod."""
        by_pod: dict[tuple[str, str], list[EventFacts]] = {}
        for event in self.events:
            by_pod.setdefault((event.namespace, event.pod_name), []).append(event)
        return by_pod
