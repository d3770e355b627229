"""What the data-truth checks share: the finding record, its kinds and severities, and
the readings of the facts more than one check needs."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from enum import StrEnum
from typing import Any

from scheduler_api.engine import (
    Flavour,
    NodeSnapshot,
    TopologyManagerPolicy,
    TopologyManagerScope,
    resolve_topology_manager,
)
from topology.services.diagnosis.facts import ClusterFacts, PodFacts


class Kind(StrEnum):
    """What a finding is about. The values are a contract (the JSON report, the
    dashboard); `topology.choices.FindingKind` holds the same values with labels."""

    FINGERPRINT_OFF_SYNC = "fingerprint-off-sync"
    STALE_NRT = "stale-nrt"
    ACCOUNTING_MISMATCH = "accounting-mismatch"
    MISSING_NRT = "missing-nrt"
    ORPHAN_NRT = "orphan-nrt"
    MISSING_CPU_TOPOLOGY = "missing-cpu-topology"
    FILTER_ADMITS_ALL = "filter-admits-all"
    POOL_CONFIG_DRIFT = "pool-config-drift"
    POD_ON_RESERVED_CPUS = "pod-on-reserved-cpus"


KINDS: tuple[str, ...] = tuple(Kind)


class Severity(StrEnum):
    INFO = "info"
    WARNING = "warning"
    ERROR = "error"


@dataclass(frozen=True)
class Finding:
    kind: str
    severity: str
    node: str | None
    object: str | None  # "namespace/name" of a pod, an NRT's name, a pool or an NRT zone
    message: str  # one sentence a platform engineer can act on, with the numbers
    evidence: dict[str, Any] = field(default_factory=dict)  # JSON-serialisable

    def as_json(self) -> dict[str, Any]:
        return {
            "kind": str(self.kind),
            "severity": str(self.severity),
            "node": self.node,
            "object": self.object,
            "message": self.message,
            "evidence": self.evidence,
        }


DEFAULT_POOL_LABEL = "node.kubernetes.io/instance-type"
UPSTREAM_FLAVOURS = frozenset({Flavour.UPSTREAM_V1ALPHA1, Flavour.UPSTREAM_V1ALPHA2})
WHOLE_CPU = 1000  # millicores


def live_pods_by_node(facts: ClusterFacts) -> dict[str, list[PodFacts]]:
    """`facts.pods_on(node)` without finished pods, for every node in one pass
    (`pods_on` scans every pod on each call, which is quadratic over a cluster)."""
    return facts.live_pods_by_node


def kubelet_topology_manager(
    node: NodeSnapshot,
) -> tuple[TopologyManagerPolicy, TopologyManagerScope] | None:
    """The kubelet's Topology Manager policy and scope: the snapshot's when known, else
    what an upstream or koordlet NRT says (scheduler-plugins' reading of it; koordlet
    writes the kubelet's policy and scope as the legacy `...PodLevel` names). None for a
    Crane node or a node without an NRT: crane-agent publishes crane-scheduler's own
    policy (from the topology-awareness label), not the kubelet's."""
    if node.flavour is None or node.flavour is Flavour.CRANE:
        if node.tm_policy is None:
            return None
        return node.tm_policy, node.tm_scope or TopologyManagerScope.CONTAINER
    published = resolve_topology_manager(node.topology_policies, node.nrt_attributes)
    return node.tm_policy or published.policy, node.tm_scope or published.scope


def iso(moment: datetime) -> str:
    return moment.isoformat()


def plural(count: int, noun: str) -> str:
    return f"{count} {noun}" if count == 1 else f"{count} {noun}s"
