"""The cluster's data-truth checks: do the NRTs, the nodes and the pods tell one story?

Pure Python over `ClusterFacts` (no Django, no database), so every rule is tested on
hand-made values. One function per check, named after its kind; each docstring states
the rule and the upstream code it follows. `find_all` runs them all and sorts the
findings by (kind, node, object), so two reports of the same data are identical.
"""

from __future__ import annotations

from topology.services.diagnosis.facts import ClusterFacts
from topology.services.diagnosis.findings.common import (
    DEFAULT_POOL_LABEL,
    KINDS,
    Finding,
    Kind,
    Severity,
    live_pods_by_node,
)
from topology.services.diagnosis.findings.kubelet import (
    filter_admits_all,
    pod_on_reserved_cpus,
    pool_config_drift,
)
from topology.services.diagnosis.findings.nrt import (
    accounting_mismatch,
    fingerprint_off_sync,
    missing_cpu_topology,
    missing_nrt,
    orphan_nrt,
    stale_nrt,
)

__all__ = [
    "KINDS",
    "NODE_CHECKS",
    "Finding",
    "Kind",
    "Severity",
    "cluster_findings",
    "find_all",
    "live_pods_by_node",
    "node_findings",
    "sorted_findings",
]


# The checks whose findings about a node read that node alone (its snapshot, its NRT's
# facts, the pods on it): `incremental` runs them again only on nodes that changed.
NODE_CHECKS = (
    fingerprint_off_sync,
    accounting_mismatch,
    missing_nrt,
    missing_cpu_topology,
    filter_admits_all,
    pod_on_reserved_cpus,
)


def find_all(
    facts: ClusterFacts,
    *,
    pool_label: str = DEFAULT_POOL_LABEL,
    stale_nrt_seconds: float = 600,
) -> list[Finding]:
    """Every check's findings, sorted by (kind, node, object) for stable reports."""
    found = node_findings(facts) + cluster_findings(facts, pool_label, stale_nrt_seconds)
    return sorted_findings(found)


def node_findings(facts: ClusterFacts) -> list[Finding]:
    return [finding for check in NODE_CHECKS for finding in check(facts)]


def cluster_findings(
    facts: ClusterFacts,
    pool_label: str = DEFAULT_POOL_LABEL,
    stale_nrt_seconds: float = 600,
) -> list[Finding]:
    """The checks across nodes (pools, NRTs without a node) or against the clock."""
    return [
        *stale_nrt(facts, stale_nrt_seconds),
        *orphan_nrt(facts),
        *pool_config_drift(facts, pool_label),
    ]


def sorted_findings(found: list[Finding]) -> list[Finding]:
    return sorted(found, key=lambda f: (f.kind, f.node or "", f.object or "", f.message))
