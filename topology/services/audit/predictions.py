"""Follow up what-if predictions asked with `track: true` (issue 32).

A tracked what-if keeps its answer's placements (per system: replica, node, NUMA zones,
cpuset), what a pod of it will be recognised by, and a fingerprint of the cluster's
nodes and bound pods. Each diagnosis refresh (so after every sync) looks for pods
created since the prediction that match it, in this order:

- the controller owner of the what-if's manifest (`metadata.ownerReferences`: a pod of
  the same ReplicaSet, StatefulSet, Job...), else
- its name, else its `generateName` (a pod whose name starts with it),

all in the manifest's namespace. A match counts once it is bound to a node; where it
landed is what its system publishes (as the audit reads it: `replay.real_placement`).
Each landed pod is compared with the prediction's replicas (greedy, closest first):
another node, other NUMA zones (when both are known), another cpuset (when both are
known). When as many pods as replicas have landed, or the window ends with some landed,
the prediction is settled:

- `held`: every landed pod is where the prediction put one;
- `missed`: at least one is not;
- `changed`: the cluster's nodes or bound pods (other than the landed ones) are not what
  they were when the prediction was made: it was answered on another cluster, and is
  counted neither way (whether it would have held is kept per landed pod);
- `expired`: no pod came within the window (`TOPOLENS_PREDICTION_WINDOW_SECONDS`).

The fingerprint covers which pods are bound where, not the NRTs' contents: a node whose
published availability changed with no pod moving (a pod resized in place, a device
gone) is not seen as a change.
"""

from __future__ import annotations

import hashlib
import logging
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from functools import cached_property
from typing import Any

from django.conf import settings
from django.db.models import Count
from django.utils import timezone

from scheduler_api.engine import NodeSnapshot, Scheduler, resolve_judge, system_for
from topology.domain.pod_phases import FINISHED_PHASES
from topology.models import Cluster, Node, Pod, PredictionStatus, TrackedPrediction
from topology.services.audit.replay import real_placement
from topology.services.diagnosis.facts import ClusterFacts, PodFacts
from topology.services.whatif.question import WhatIfQuestion

logger = logging.getLogger(__name__)

NODE, ZONES, CPUSET = "node", "zones", "cpuset"
RETENTION = timedelta(days=30)  # settled predictions are kept this long


def window() -> timedelta:
    """How long a prediction waits for its pods (TOPOLENS_PREDICTION_WINDOW_SECONDS)."""
    return timedelta(seconds=settings.TOPOLENS_PREDICTION_WINDOW_SECONDS)


def window_text() -> str:
    """The window for a person: "1 h", "90 min"."""
    minutes = round(window().total_seconds() / 60)
    return f"{minutes // 60} h" if minutes % 60 == 0 else f"{minutes} min"


# --- recognising the prediction's pods --------------------------------------------------


@dataclass(frozen=True)
class MatchKeys:
    """What a pod of the prediction is recognised by (see the module docstring)."""

    namespace: str
    name: str = ""
    generate_name: str = ""
    owner_kind: str = ""
    owner_name: str = ""

    @classmethod
    def of_manifest(cls, manifest: Mapping[str, Any]) -> MatchKeys:
        metadata = manifest.get("metadata")
        metadata = metadata if isinstance(metadata, Mapping) else {}
        owner = _controller(metadata.get("ownerReferences"))
        return cls(
            namespace=_text(metadata.get("namespace")) or "default",
            name=_text(metadata.get("name")),
            generate_name=_text(metadata.get("generateName")),
            owner_kind=_text(owner.get("kind")) if owner else "",
            owner_name=_text(owner.get("name")) if owner else "",
        )

    @property
    def text(self) -> str:
        """What a person reads: "team/ReplicaSet/web-5d9f", "team/web-0", "team/job-*"."""
        if self.owner_kind:
            return f"{self.namespace}/{self.owner_kind}/{self.owner_name}"
        if self.name:
            return f"{self.namespace}/{self.name}"
        return f"{self.namespace}/{self.generate_name}*" if self.generate_name else ""

    @classmethod
    def of_row(cls, row: TrackedPrediction) -> MatchKeys:
        return cls(row.namespace, row.name, row.generate_name, row.owner_kind, row.owner_name)

    def matches(self, namespace: str, name: str, owners: Sequence[Mapping[str, Any]]) -> bool:
        if namespace != self.namespace:
            return False
        if self.owner_kind:
            owner = _controller(owners)
            return bool(owner) and (owner.get("kind"), owner.get("name")) == (
                self.owner_kind,
                self.owner_name,
            )
        if self.name:
            return name == self.name
        return bool(self.generate_name) and name.startswith(self.generate_name)


def _controller(references: object) -> Mapping[str, Any] | None:
    """The controller owner reference, else the first (a hand-written manifest may not
    set `controller`); None when there is none."""
    if not isinstance(references, Sequence) or isinstance(references, str):
        return None
    owners = [ref for ref in references if isinstance(ref, Mapping)]
    controllers = [ref for ref in owners if ref.get("controller")]
    return (controllers or owners or [None])[0]


def _text(value: object) -> str:
    return value if isinstance(value, str) else ""


# --- recording ---------------------------------------------------------------------------


def predicted_placements(answer: Mapping[str, Any]) -> dict[str, list[dict[str, Any]]]:
    """Per system, where the answer puts each replica (from its `groups`; a comparison of
    schedulers maps each scheduler to an answer, each with its own groups)."""
    answers = [answer] if "groups" in answer else [a for a in answer.values() if "groups" in a]
    predicted: dict[str, list[dict[str, Any]]] = {}
    for one in answers:
        for group in one["groups"]:
            placements = [
                {k: p[k] for k in ("replica", "node", "numa_zones", "cpuset")}
                for p in group["placements"]
            ]
            predicted.setdefault(group["system"], placements)
    return predicted


def record_prediction(
    *,
    cluster: Cluster,
    question: WhatIfQuestion,
    answer: Mapping[str, Any],
    user: Any,
    source: str,
) -> TrackedPrediction:
    """Remember the answer's prediction for follow-up; returns the stored row."""
    keys = MatchKeys.of_manifest(question.pod)
    now = timezone.now()
    return TrackedPrediction.objects.create(
        cluster=cluster,
        created_at=now,
        created_by=user if getattr(user, "is_authenticated", False) else None,
        source=source,
        namespace=keys.namespace,
        name=keys.name,
        generate_name=keys.generate_name,
        owner_kind=keys.owner_kind,
        owner_name=keys.owner_name,
        replicas=question.replicas,
        scheduler=question.scheduler,
        scheduler_name=question.pod_scheduler_name,
        predicted=predicted_placements(answer),
        data_age_seconds=_data_age(answer),
        fingerprint=BoundPods(cluster).fingerprint(),
        expires_at=now + window(),
    )


def _data_age(answer: Mapping[str, Any]) -> float | None:
    ages = [
        a.get("data_age_seconds") for a in ([answer] if "groups" in answer else answer.values())
    ]
    known = [age for age in ages if isinstance(age, int | float)]
    return max(known) if known else None


def tracked_json(row: TrackedPrediction) -> dict[str, Any]:
    """What a tracked answer says of its prediction (the answer's `tracked`); the time in
    ISO 8601, UTC, as the API writes times."""
    expires = timezone.localtime(row.expires_at, UTC).isoformat().replace("+00:00", "Z")
    return {"id": row.pk, "matched_by": row.matched_by, "expires_at": expires}


class BoundPods:
    """A cluster's node names and its bound, unfinished pods (node, uid), read once on
    first use: several predictions settled together hash them once."""

    def __init__(self, cluster: Cluster) -> None:
        self.cluster = cluster

    @cached_property
    def _pairs(self) -> tuple[list[str], list[tuple[str, str]]]:
        nodes = sorted(Node.objects.filter(cluster=self.cluster).values_list("name", flat=True))
        pods = sorted(
            Pod.objects.filter(cluster=self.cluster)
            .exclude(node_name="")
            .exclude(phase__in=FINISHED_PHASES)
            .values_list("node_name", "uid")
        )
        return nodes, pods

    def fingerprint(self, excluding: Iterable[str] = ()) -> str:
        """The nodes and bound pods as one hash; `excluding`: pod uids left out (the
        pods that landed for the prediction)."""
        left_out = set(excluding)
        nodes, pods = self._pairs
        digest = hashlib.sha256()
        for name in nodes:
            digest.update(f"n\0{name}\n".encode())
        for node, uid in pods:
            if uid not in left_out:
                digest.update(f"p\0{node}\0{uid}\n".encode())
        return digest.hexdigest()


# --- following up ------------------------------------------------------------------------


@dataclass(frozen=True)
class Landed:
    """A pod of the prediction, bound, and where its system says it is."""

    namespace: str
    name: str
    uid: str
    node: str
    system: str
    numa_zones: tuple[int, ...] | None  # None: its system publishes no placement
    cpuset: frozenset[int] | None


@dataclass(frozen=True)
class Followed:
    waiting: int  # predictions still waiting after this follow-up
    settled: int  # predictions settled by it (held, missed, changed, expired)


def follow_predictions(
    cluster: Cluster, facts: ClusterFacts, now: datetime | None = None
) -> Followed:
    """Match the cluster's waiting predictions with pods that landed, and settle those
    that are complete or past their window (see the module docstring)."""
    now = now or timezone.now()
    waiting = list(
        TrackedPrediction.objects.filter(cluster=cluster, status=PredictionStatus.WAITING)
    )
    if not waiting:
        return Followed(0, 0)
    since = min(row.created_at for row in waiting).replace(microsecond=0)
    candidates = list(
        Pod.objects.filter(cluster=cluster, created_at__gte=since)
        .exclude(node_name="")
        .values("namespace", "name", "uid", "node_name", "owner_references", "created_at")
    )
    index, bound = _Index(facts), BoundPods(cluster)
    settled = 0
    for row in waiting:
        landed = [index.landed(pod, row) for pod in _matched(row, candidates)]
        if _settle(row, landed, now, bound):
            settled += 1
    return Followed(len(waiting) - settled, settled)


def _matched(
    row: TrackedPrediction, candidates: Sequence[Mapping[str, Any]]
) -> list[Mapping[str, Any]]:
    """The prediction's pods among `candidates`: created since it, oldest first, as
    many as its replicas."""
    keys = MatchKeys.of_row(row)
    since = row.created_at.replace(microsecond=0)  # creationTimestamp has whole seconds
    matched = [
        pod for pod in candidates
        if pod["created_at"] is not None and pod["created_at"] >= since
        and keys.matches(pod["namespace"], pod["name"], pod["owner_references"] or [])
    ]  # fmt: skip
    matched.sort(key=lambda pod: (pod["created_at"], pod["name"]))
    return matched[: row.replicas]


class _Index:
    """The facts' nodes and pods by name and uid, indexed once per follow-up."""

    def __init__(self, facts: ClusterFacts) -> None:
        self.facts = facts

    @cached_property
    def nodes(self) -> dict[str, NodeSnapshot]:
        return {node.name: node for node in self.facts.snapshot.nodes}

    @cached_property
    def pods(self) -> dict[str, PodFacts]:
        return {pod.uid: pod for pod in self.facts.pods}

    def landed(self, pod: Mapping[str, Any], row: TrackedPrediction) -> Landed:
        node = self.nodes.get(pod["node_name"])
        placed = real_placement(node, pod["uid"]) if node is not None else None
        return Landed(
            namespace=pod["namespace"],
            name=pod["name"],
            uid=pod["uid"],
            node=pod["node_name"],
            system=self.system_of(pod["uid"], row, node),
            numa_zones=placed.numa_zones if placed else None,
            cpuset=placed.cpuset if placed else None,
        )

    def system_of(self, uid: str, row: TrackedPrediction, node: NodeSnapshot | None) -> str:
        """The system whose prediction the pod is held to: the only one predicted, else
        the one that judges the landed pod (its profile or marks, else its node's NRT
        flavour)."""
        if len(row.predicted) == 1:
            return next(iter(row.predicted))
        pod = self.pods.get(uid)
        if pod is None:
            return ""
        judge = resolve_judge(pod.spec, pod.scheduler_name, self.facts.profiles)
        if judge.system is not Scheduler.AUTO:
            return judge.system.value
        return system_for(node, Scheduler.AUTO).value if node is not None else ""


def compare_landed(
    predicted: Sequence[Mapping[str, Any]], landed: Sequence[Landed]
) -> list[dict[str, Any]]:
    """Each landed pod against the closest replica not yet taken (fewest differences,
    then the lowest replica): what differs, and that replica."""
    free = list(predicted)
    compared = []
    for pod in landed:
        best = min(free, key=lambda p: (len(_differences(p, pod)), p["replica"]), default=None)
        if best is not None:
            free.remove(best)
        differs = _differences(best, pod) if best is not None else [NODE]
        compared.append(_landed_json(pod, best, differs))
    return compared


def _differences(predicted: Mapping[str, Any] | None, pod: Landed) -> list[str]:
    if predicted is None or predicted["node"] != pod.node:
        return [NODE]
    differs = []
    zones = predicted["numa_zones"]
    if zones and pod.numa_zones is not None and set(zones) != set(pod.numa_zones):
        differs.append(ZONES)
    cpuset = predicted["cpuset"]
    if cpuset is not None and pod.cpuset is not None and set(cpuset) != pod.cpuset:
        differs.append(CPUSET)
    return differs


def _landed_json(
    pod: Landed, predicted: Mapping[str, Any] | None, differs: list[str]
) -> dict[str, Any]:
    return {
        "namespace": pod.namespace,
        "name": pod.name,
        "uid": pod.uid,
        "node": pod.node,
        "system": pod.system,
        "published": pod.numa_zones is not None,
        "numa_zones": list(pod.numa_zones or ()),
        "cpuset": sorted(pod.cpuset) if pod.cpuset is not None else None,
        "held": not differs,
        "differs": differs,
        "predicted": dict(predicted) if predicted is not None else None,
    }


def _settle(row: TrackedPrediction, landed: list[Landed], now: datetime, bound: BoundPods) -> bool:
    """Store what landed; settle the prediction when complete or past its window.
    True when it was settled."""
    compared = _compare_by_system(row, landed)
    if len(landed) < row.replicas and now < row.expires_at:
        if compared != row.landed:
            row.landed = compared
            row.save(update_fields=["landed"])
        return False
    row.landed, row.resolved_at = compared, now
    row.status, row.why = _outcome(row, compared, bound)
    row.save(update_fields=["landed", "resolved_at", "status", "why"])
    return True


def _compare_by_system(row: TrackedPrediction, landed: list[Landed]) -> list[dict[str, Any]]:
    """Each system's landed pods against that system's replicas, in landing order."""
    compared: dict[str, dict[str, Any]] = {}
    for system in dict.fromkeys(pod.system for pod in landed):
        pods = [pod for pod in landed if pod.system == system]
        for item in compare_landed(row.predicted.get(system, []), pods):
            compared[item["uid"]] = item
    return [compared[pod.uid] for pod in landed]


def _outcome(
    row: TrackedPrediction, compared: Sequence[Mapping[str, Any]], bound: BoundPods
) -> tuple[str, str]:
    """The settled status and why, from the landed pods compared (`landed` JSON) and the
    cluster's bound pods now."""
    if not compared:
        return PredictionStatus.EXPIRED, f"no pod of {row.matched_by} came within the window"
    held = all(item["held"] for item in compared)
    came = f"{len(compared)} of {row.replicas} replicas landed"
    uids = [item["uid"] for item in compared]
    if bound.fingerprint(uids) != row.fingerprint:
        verdict = "held" if held else "did not hold"
        why = (
            f"{came}; the cluster's nodes or bound pods changed between the prediction and "
            f"the landing, so it is not counted (it {verdict})"
        )
        return PredictionStatus.CHANGED, why
    if held:
        return PredictionStatus.HELD, f"{came}, each where the prediction put one"
    wrong = sum(1 for item in compared if not item["held"])
    return PredictionStatus.MISSED, f"{came}; {wrong} not where the prediction put one"


def prediction_counts(cluster: Cluster) -> dict[str, Any]:
    """Predictions per status, and the share of settled, counted ones that held."""
    counts = {status: 0 for status in PredictionStatus.values}
    per_status = TrackedPrediction.objects.filter(cluster=cluster).order_by().values("status")
    counts.update(per_status.annotate(count=Count("pk")).values_list("status", "count"))
    counted = counts[PredictionStatus.HELD] + counts[PredictionStatus.MISSED]
    rate = counts[PredictionStatus.HELD] / counted if counted else None
    return {**counts, "held_rate": rate}


def prune_predictions(now: datetime | None = None) -> int:
    """Housekeeping: settle the predictions past their window that no refresh followed
    up (a cluster that stopped syncing), on what had landed by then; delete settled ones
    older than RETENTION. Returns the rows deleted."""
    now = now or timezone.now()
    overdue = TrackedPrediction.objects.filter(
        status=PredictionStatus.WAITING, expires_at__lt=now
    ).select_related("cluster")
    bound: dict[int, BoundPods] = {}
    for row in overdue:
        pods = bound.setdefault(row.cluster_id, BoundPods(row.cluster))
        row.status, row.why = _outcome(row, row.landed, pods)
        row.resolved_at = now
        row.save(update_fields=["status", "why", "resolved_at"])
    old = TrackedPrediction.objects.exclude(status=PredictionStatus.WAITING)
    deleted, _ = old.filter(resolved_at__lt=now - RETENTION).delete()
    return deleted
