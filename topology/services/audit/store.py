"""Keep a cluster's stored agreement audit in step with its mirror (issue 32).

`refresh_agreement` runs at the end of each diagnosis refresh (which every mirror write
asks for, coalesced: `services.diagnosis.refresh`), on the same facts. Incremental: a
pod is replayed again only when its node's `NodeSnapshot` is a new object (the what-if's
snapshot cache keeps an unchanged node as the very same object, so a node whose pods or
data did not change is skipped); every other pod keeps its last result. One kept state
per cluster per process: a new process starts with a full audit, and every
`full_audit_seconds` a refresh replays every pod again. Rows change in one transaction,
only those whose content changed; each refresh appends the cluster's rates to its
history (`AgreementSample`).
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field
from datetime import timedelta

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from scheduler_api.engine import NodeSnapshot
from topology.models import AgreementSample, Cluster, PodAgreement
from topology.services.audit.replay import PodAudit, audit_pod
from topology.services.audit.report import rates
from topology.services.diagnosis.facts import ClusterFacts

SAMPLES_KEPT = timedelta(days=14)  # the rate-over-time history kept per cluster


@dataclass
class Kept:
    """What the last refresh of a cluster in this process replayed, by node object, and
    when it last replayed every pod (`time.monotonic()`; None: never)."""

    nodes: dict[str, NodeSnapshot] = field(default_factory=dict)
    audits: dict[str, PodAudit] = field(default_factory=dict)  # by namespace/name
    reservations: tuple[object, ...] = ()
    profiles: tuple[object, ...] = ()
    full_at: float | None = None
    # what the last `audit_facts` replayed: the pods (namespace/name) and their nodes
    replayed: set[str] = field(default_factory=set)
    replayed_nodes: set[str] = field(default_factory=set)


def full_audit_seconds() -> float:
    """How often a refresh replays every pod whatever changed (settings
    TOPOLENS_AUDIT_FULL_SECONDS, default 6 h): what the node objects cannot tell (an
    engine upgrade in a long-lived worker) is caught up on that schedule."""
    return float(getattr(settings, "TOPOLENS_AUDIT_FULL_SECONDS", 6 * 3600))


_KEPT: dict[int, Kept] = {}
_LOCK = threading.Lock()


def forget(cluster_id: int) -> None:
    with _LOCK:
        _KEPT.pop(cluster_id, None)


@dataclass(frozen=True)
class Audited:
    pods: int  # pods with a verdict now
    replayed: int  # pods replayed by this refresh
    changed: int  # rows written or removed


def audit_facts(facts: ClusterFacts, kept: Kept) -> tuple[dict[str, PodAudit], int]:
    """Every live pod's audit, replaying only those on nodes whose object is new (all of
    them when the Reservations or the scheduler profiles changed)."""
    nodes = {node.name: node for node in facts.snapshot.nodes}
    now = time.monotonic()
    due = kept.full_at is None or now - kept.full_at >= full_audit_seconds()
    same_world = (
        not due
        and kept.reservations == facts.snapshot.reservations
        and kept.profiles == facts.profiles
    )
    audits: dict[str, PodAudit] = {}
    kept.replayed, kept.replayed_nodes = set(), set()
    for node_name, pods in facts.live_pods_by_node.items():
        node = nodes.get(node_name)
        unchanged = same_world and node is not None and kept.nodes.get(node_name) is node
        for pod in pods:
            found = kept.audits.get(pod.key) if unchanged else None
            if found is None or found.uid != pod.uid:
                found = audit_pod(facts, pod, nodes)
                kept.replayed.add(pod.key)
                kept.replayed_nodes.add(node_name)
            audits[pod.key] = found
    kept.nodes = nodes
    kept.audits = audits
    if not same_world:
        kept.full_at = now
    kept.reservations, kept.profiles = facts.snapshot.reservations, facts.profiles
    return audits, len(kept.replayed)


def refresh_agreement(cluster: Cluster, facts: ClusterFacts) -> Audited:
    """Audit the cluster's running pods on `facts` and store what changed."""
    with _LOCK:
        kept = _KEPT.setdefault(cluster.pk, Kept())
    try:
        audits, replayed = audit_facts(facts, kept)
    except BaseException:
        forget(cluster.pk)
        raise
    now = timezone.now()
    with transaction.atomic():
        changed = _write(cluster, audits, kept, now)
        AgreementSample.objects.create(cluster=cluster, taken_at=now, rates=rates(audits.values()))
        AgreementSample.objects.filter(cluster=cluster, taken_at__lt=now - SAMPLES_KEPT).delete()
    return Audited(len(audits), replayed, changed)


def _write(cluster: Cluster, audits: dict[str, PodAudit], kept: Kept, now: object) -> int:
    """Rows for `audits`: pods gone deleted, new ones created, and of the pods this
    refresh replayed those whose body changed rewritten. The others came from the kept
    state unchanged, and so is their row: their bodies are not read again (after one
    sync that is a few nodes' pods, not the cluster's)."""
    rows = PodAgreement.objects.filter(cluster=cluster)
    stored = {f"{ns}/{name}": pk for pk, ns, name in rows.values_list("pk", "namespace", "name")}
    gone = [pk for key, pk in stored.items() if key not in audits]
    PodAgreement.objects.filter(pk__in=gone).delete()
    bodies = {
        f"{ns}/{name}": body
        for ns, name, body in rows.filter(node_name__in=kept.replayed_nodes).values_list(
            "namespace", "name", "body"
        )
    }
    new, updated = [], []
    for key in kept.replayed | (audits.keys() - stored.keys()):
        audit = audits[key]
        body = audit.as_json()
        row = PodAgreement(
            cluster=cluster, namespace=audit.namespace, name=audit.name, uid=audit.uid,
            node_name=audit.node, system=audit.system, verdict=audit.verdict, body=body,
            computed_at=now,
        )  # fmt: skip
        if key not in stored:
            new.append(row)
        elif bodies.get(key) != body:
            row.pk = stored[key]
            updated.append(row)
    PodAgreement.objects.bulk_create(new, batch_size=2000)
    fields = ["uid", "node_name", "system", "verdict", "body", "computed_at"]
    PodAgreement.objects.bulk_update(updated, fields, batch_size=2000)
    return len(gone) + len(new) + len(updated)
