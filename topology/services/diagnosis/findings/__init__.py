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

__all__ = ["KINDS", "Finding", "Kind", "Severity", "find_all", "live_pods_by_node"]


def find_all(
    facts: ClusterFacts,
    *,
    pool_label: str = DEFAULT_POOL_LABEL,
    stale_nrt_seconds: float = 600,
) -> list[Finding]:
    """Every check's findings, sorted by (kind, node, object) for stable reports."""
    findings = [
        *fingerprint_off_sync(facts),
        *stale_nrt(facts, stale_nrt_seconds),
        *accounting_mismatch(facts),
        *missing_nrt(facts),
        *orphan_nrt(facts),
        *missing_cpu_topology(facts),
        *filter_admits_all(facts),
        *pool_config_drift(facts, pool_label),
        *pod_on_reserved_cpus(facts),
    ]
    return sorted(findings, key=lambda f: (f.kind, f.node or "", f.object or "", f.message))
