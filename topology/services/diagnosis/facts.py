"""What the diagnosis reads, in one shape whether it comes from the mirror or a dump.

The engine's `ClusterSnapshot` already carries each node's zones, CPUs, reserved CPUs,
policies and the allocations its pods hold; `ClusterFacts` adds what only a diagnosis
needs: every pod with its status (Pending, rejected and running), the pods' warning
events, each NRT's published pod fingerprint and when it last changed, NRTs whose node
is gone, and when the data was taken. Plain values, no Django: the checks are tested on
them directly.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from functools import cached_property
from typing import Any

from scheduler_api.engine import ClusterSnapshot, PodSpec, ReservationSnapshot, SchedulerProfile
from topology.domain.pod_phases import FINISHED_PHASES


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
    # what the engine judges (requests, QoS, annotations it reads): the spec, or a
    # function that builds it, called once when first read (`spec`)
    spec_source: PodSpec | Callable[[], PodSpec] = field(repr=False, compare=False)
    created_at: datetime | None = None
    status: Mapping[str, Any] = field(default_factory=dict)
    rejected: bool = False  # refused by the kubelet at admission (holds nothing)

    @property
    def key(self) -> str:
        return f"{self.namespace}/{self.name}"

    @cached_property
    def spec(self) -> PodSpec:
        """The pod as the engine sees it; built on first read when given as a function
        (the mirror reads 100k pods, and few of them are ever judged)."""
        source = self.spec_source
        return source if isinstance(source, PodSpec) else source()

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

    @cached_property
    def live_pods_by_node(self) -> dict[str, list[PodFacts]]:
        """The pods bound to each node and holding resources there (not finished, not
        rejected), in `pods` order; indexed once, several checks read it."""
        by_node: dict[str, list[PodFacts]] = {}
        for pod in self.pods:
            if pod.node_name and not pod.rejected and pod.phase not in FINISHED_PHASES:
                by_node.setdefault(pod.node_name, []).append(pod)
        return by_node

    @cached_property
    def reservations_by_node(self) -> dict[str, tuple[ReservationSnapshot, ...]]:
        """The snapshot's Reservations by node, indexed once (a replay asks per pod)."""
        by_node: dict[str, list[ReservationSnapshot]] = {}
        for reservation in self.snapshot.reservations:
            by_node.setdefault(reservation.node_name, []).append(reservation)
        return {node: tuple(found) for node, found in by_node.items()}

    def events_of(self, pod: PodFacts) -> list[EventFacts]:
        return self._events_by_pod.get((pod.namespace, pod.name), [])

    @cached_property
    def _events_by_pod(self) -> dict[tuple[str, str], list[EventFacts]]:
        """The events by pod, indexed once: a diagnosis asks for them pod after pod."""
        by_pod: dict[tuple[str, str], list[EventFacts]] = {}
        for event in self.events:
            by_pod.setdefault((event.namespace, event.pod_name), []).append(event)
        return by_pod
