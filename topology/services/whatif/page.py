"""The dashboard's what-if: run a question against the mirror and shape the answer.

The engine work is `topology.services.whatif.service` (`remembered_judgement`, the
function behind `ask`: an answer is remembered per mirror version, so the ranking's other
pages cost no engine run); this module keeps the snapshot it read, so that the page can
also show which cores the engine would pick on a node outside the few it details
by default, and turns the answer's JSON into rows, a best node and a core-map
target for the template. It reads only, and never writes.

Queries: the snapshot's (a fixed number) plus at most three for the nodes drawn in
full, whatever the cluster's size.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any
from urllib.parse import urlencode

import yaml
from django.core.paginator import Page, Paginator

from scheduler_api.engine import (
    ClusterSnapshot,
    NodeSnapshot,
    PodSpec,
    QoSClass,
    Scheduler,
    SchedulerProfile,
    evaluate,
    resolve_judge,
)
from topology.models import Cluster, Node
from topology.parsers.cpulist import format_cpulist
from topology.selectors.dra import nodes_with_dra_devices
from topology.services.mirror.cpu_state import NodeCPUState, node_cpu_state
from topology.services.whatif.question import WhatIfQuestion
from topology.services.whatif.scheduler_profiles import cluster_profiles
from topology.services.whatif.service import mirror_snapshot, remembered_judgement

PAGE_SIZE = 100
TOP_REASONS = 5


@dataclass(frozen=True)
class VerdictRow:
    """One node of the ranking, as the table shows it."""

    rank: int  # within the rows of its system: ranks of different systems never mix
    node: str
    system: str
    fits: bool
    score: int | None
    copies: int  # how many copies this node takes, filled alone
    zones: tuple[int, ...]
    cpuset: frozenset[int] | None
    reasons: tuple[str, ...]
    notes: tuple[str, ...]
    has_cpu_layout: bool = False
    scheduler_fits: bool = False
    admission: Mapping[str, Any] | None = None
    zones_from_cpuset: bool = False  # the scheduler chose no zone: the pinned CPUs' zones
    rules: tuple[str, ...] = ()  # the rules that judged this node (node_rules)

    @property
    def rejected_by_kubelet(self) -> bool:
        return self.scheduler_fits and not self.fits

    @property
    def verdict(self) -> str:
        if self.fits:
            return "fits"
        if self.rejected_by_kubelet and self.admission:
            return f"bound, then rejected by the kubelet: {self.admission['reason']}"
        return "does not fit"

    @property
    def admission_unchecked(self) -> str:
        """Why the kubelet's admission could not be checked ("" when it was)."""
        admission = self.admission
        return str(admission["reason"]) if admission and not admission["checked"] else ""

    @property
    def cpuset_text(self) -> str:
        return format_cpulist(self.cpuset) if self.cpuset else ""

    @property
    def zones_text(self) -> str:
        return zones_text(self.zones)


@dataclass(frozen=True)
class ZoneView:
    """One NUMA zone of a drawn node, as the engine saw it, and whether the pod would use it."""

    numa_id: int
    name: str
    cpu_allocatable: int | None
    cpu_available: int | None
    memory_available: int | None
    chosen: bool


@dataclass(frozen=True)
class NodeFocus:
    """A node drawn in full: its CPU state (or why there is none) and the cores to highlight."""

    row: VerdictRow
    state: NodeCPUState
    zones: tuple[ZoneView, ...]
    highlight: frozenset[int] = frozenset()
    remark: str = ""

    @property
    def zone_names(self) -> dict[int, str]:
        return {zone.numa_id: zone.name for zone in self.zones}

    @property
    def highlight_text(self) -> str:
        return format_cpulist(self.highlight)


@dataclass(frozen=True)
class ReasonCount:
    check: str
    nodes: int
    example: str


@dataclass(frozen=True)
class PlacementRow:
    replica: int  # 1-based, as people count
    node: str | None
    zones: str
    cpuset: str


@dataclass(frozen=True)
class SystemGroup:
    """One system's own ranking: its best node, counts, and its replicas' nodes."""

    system: str
    fits: int
    rejected_by_kubelet: int
    best: str | None
    placements: list[PlacementRow]


def zones_text(zones: Sequence[int]) -> str:
    """NUMA zone ids for a person: "zone 1", "zones 0–1", "zones 0, 2"; "" for none."""
    ordered = sorted(set(zones))
    if not ordered:
        return ""
    if len(ordered) == 1:
        return f"zone {ordered[0]}"
    if ordered == list(range(ordered[0], ordered[-1] + 1)):
        return f"zones {ordered[0]}–{ordered[-1]}"
    return "zones " + ", ".join(str(z) for z in ordered)


@dataclass(frozen=True)
class WhatIfPage:
    question: WhatIfQuestion
    qos_class: str
    cpu_note: str
    scheduler: str
    scoring: str
    data_age_seconds: float | None
    node_count: int
    fit_count: int
    capacity_total: int
    page: Page[VerdictRow]
    best: NodeFocus | None
    cores: NodeFocus | None
    reasons: list[ReasonCount]
    placements: list[PlacementRow]
    manifest_yaml: str
    notices: list[str] = field(default_factory=list)
    judged_by: Mapping[str, Any] = field(default_factory=dict)
    groups: list[SystemGroup] = field(default_factory=list)
    rejected_count: int = 0

    @property
    def per_system(self) -> bool:
        """No profile or mark says which system sees the pod: each system's answer apart."""
        return self.judged_by.get("system") == Scheduler.AUTO.value and len(self.groups) > 1

    @property
    def reservation_node(self) -> str | None:
        """Where a Koordinator Reservation of this pod would go: koord-scheduler schedules
        Reservations, so the best node of the Koordinator ranking (None: none fits)."""
        for group in self.groups:
            if group.system == Scheduler.KOORDINATOR.value:
                return group.best
        return None

    @property
    def reserve_query(self) -> str:
        """The query string that prefills a Koordinator Reservation of this pod on the
        Koordinator ranking's best node (admin's reservation page previews it before
        anything is written)."""
        node = self.reservation_node or "best"
        return urlencode({"pod_manifest": json.dumps(self.question.pod), "node": node})

    @property
    def placed(self) -> int:
        return sum(1 for p in self.placements if p.node is not None)

    @property
    def data_age_text(self) -> str:
        return age_text(self.data_age_seconds)


def whatif_page(
    *,
    cluster: Cluster,
    question: WhatIfQuestion,
    page_number: str | int | None = None,
    cores: str | None = None,
) -> WhatIfPage:
    """Run `question` on the cluster's mirror; WhatIfInputError when it cannot run."""
    snapshot = mirror_snapshot(cluster, use_draft_policies=question.use_draft_policies)
    profiles = cluster_profiles(cluster)
    question = question.with_dra_nodes(lambda: nodes_with_dra_devices(cluster))
    # remembered: paging through the ranking asks the same question again
    answer = remembered_judgement(snapshot, question, profiles=profiles)
    spec = question.spec
    ranking = Ranking(answer, snapshot)
    notices = []
    if cores and cores not in ranking.index:
        notices.append(f"No node named {cores!r} in this cluster: showing the best node's cores.")
        cores = None
    best, focus = _focus_nodes(cluster, ranking, snapshot, question, cores, profiles)
    groups = system_groups(answer["groups"])
    return WhatIfPage(
        question=question,
        qos_class=spec.qos_class.value,
        cpu_note=cpu_note(spec),
        scheduler=answer["scheduler"],
        scoring=answer["scoring"],
        data_age_seconds=answer["data_age_seconds"],
        node_count=len(ranking.nodes),
        fit_count=sum(1 for n in ranking.nodes if n["fits"]),
        capacity_total=answer["capacity"]["total"],
        page=ranking.page(page_number),
        best=best,
        cores=focus,
        reasons=top_reasons(ranking.nodes),
        placements=placement_rows(answer["placements"]),
        manifest_yaml=yaml.safe_dump(question.pod, sort_keys=False),
        notices=notices,
        judged_by=answer["judged_by"],
        groups=groups,
        rejected_count=sum(group.rejected_by_kubelet for group in groups),
    )


def system_groups(groups: Iterable[Mapping[str, Any]]) -> list[SystemGroup]:
    return [
        SystemGroup(
            system=group["system"],
            fits=group["fits"],
            rejected_by_kubelet=group["rejected_by_kubelet"],
            best=group["best"],
            placements=placement_rows(group["placements"]),
        )
        for group in groups
    ]


class Ranking:
    """The answer's nodes, best first, turned into table rows on demand."""

    def __init__(self, answer: Mapping[str, Any], snapshot: ClusterSnapshot | None = None):
        self.nodes: list[dict[str, Any]] = answer["nodes"]
        self.rule_sets: Mapping[str, list[str]] = answer.get("rules", {})
        self.copies: Mapping[str, int] = answer["capacity"]["per_node"]
        self.index = {verdict["node"]: rank for rank, verdict in enumerate(self.nodes)}
        self.snapshots = {n.name: n for n in snapshot.nodes} if snapshot is not None else {}
        # each system's rows come together: a row's rank counts from its system's first
        self.group_start: dict[str, int] = {}
        for position, verdict in enumerate(self.nodes):
            self.group_start.setdefault(verdict["system"], position)

    def row(self, name: str) -> VerdictRow:
        return self._row(self.index[name])

    def rows(self, count: int) -> list[VerdictRow]:
        return [self._row(position) for position in range(min(count, len(self.nodes)))]

    def page(self, number: str | int | None) -> Page[VerdictRow]:
        """PAGE_SIZE rows of the ranking: fitting nodes come first, as the engine ranks."""
        page = Paginator(range(len(self.nodes)), PAGE_SIZE).get_page(number)
        page.object_list = [self._row(position) for position in page.object_list]
        return page

    def has_cpu_layout(self, name: str) -> bool:
        node = self.snapshots.get(name)
        return bool(node and node.cpus)

    def best(self) -> str | None:
        """The first group's best node (the judging system's, when one system judges)."""
        for verdict in self.nodes:
            if verdict["fits"]:
                return str(verdict["node"])
            if verdict["system"] != self.nodes[0]["system"]:
                return None
        return None

    def best_with_layout(self) -> str | None:
        """The best-ranked fitting node of the first group that publishes its CPUs
        (koordlet's cpu-topology)."""
        for verdict in self.nodes:
            if not verdict["fits"] or verdict["system"] != self.nodes[0]["system"]:
                return None
            if self.has_cpu_layout(verdict["node"]):
                return str(verdict["node"])
        return None

    def _row(self, position: int) -> VerdictRow:
        verdict = self.nodes[position]
        name = verdict["node"]
        cpuset = frozenset(verdict["cpuset"]) if verdict["cpuset"] is not None else None
        zones = tuple(verdict["numa_zones"])
        from_cpuset = not zones and bool(cpuset)
        if from_cpuset and cpuset is not None:
            zones = self.zones_of_cpus(name, cpuset)
        return VerdictRow(
            rank=position - self.group_start[verdict["system"]] + 1,
            node=name,
            system=verdict["system"],
            fits=verdict["fits"],
            score=verdict["score"],
            copies=self.copies.get(name, 0),
            zones=zones,
            cpuset=cpuset,
            reasons=tuple(verdict["reasons"]),
            notes=tuple(verdict["notes"]),
            has_cpu_layout=self.has_cpu_layout(name),
            scheduler_fits=bool(verdict.get("scheduler_fits", verdict["fits"])),
            admission=verdict.get("admission"),
            zones_from_cpuset=from_cpuset and bool(zones),
            rules=tuple(self.rule_sets.get(verdict.get("rules", ""), ())),
        )

    def zones_of_cpus(self, name: str, cpus: frozenset[int]) -> tuple[int, ...]:
        """The NUMA zones holding `cpus` on `name`, from its published CPU layout."""
        node = self.snapshots.get(name)
        numa_of = {cpu: numa for cpu, _core, _socket, numa in (node.cpus if node else ())}
        return tuple(sorted({numa_of[cpu] for cpu in cpus if cpu in numa_of}))


def _focus_nodes(
    cluster: Cluster,
    ranking: Ranking,
    snapshot: ClusterSnapshot,
    question: WhatIfQuestion,
    cores: str | None,
    profiles: Sequence[SchedulerProfile] = (),
) -> tuple[NodeFocus | None, NodeFocus | None]:
    """The best node (of the first group), and the node whose cores are drawn (the asked
    one, else the best one with a published CPU layout)."""
    best = ranking.best()
    target = cores or (best if best and ranking.has_cpu_layout(best) else None)
    target = target or ranking.best_with_layout()
    names = {name for name in (best, target) if name}
    nodes = Node.objects.filter(cluster=cluster, name__in=names).select_related(
        "topology", "cpu_reservation"
    )
    states = {node.name: node_cpu_state(node=node) for node in nodes}
    focus: dict[str, NodeFocus] = {}
    for name in names:
        row = ranking.row(name)
        highlight = row.cpuset
        if highlight is None and row.fits and row.has_cpu_layout and name == target:
            highlight = decided_cpuset(snapshot, question, row, profiles)
        state = states.get(name) or NodeCPUState(name, missing_detail="not in the mirror")
        zones = zone_views(ranking.snapshots.get(name), row.zones)
        remark = focus_remark(row, best, cores, highlight)
        focus[name] = NodeFocus(row, state, zones, highlight or frozenset(), remark)
    return (focus[best] if best else None), (focus[target] if target else None)


def decided_cpuset(
    snapshot: ClusterSnapshot,
    question: WhatIfQuestion,
    row: VerdictRow,
    profiles: Sequence[SchedulerProfile] = (),
) -> frozenset[int] | None:
    """The CPUs the engine would pick on `row`'s node for the first replica.

    The answer's JSON carries a cpuset only for the few top-ranked nodes of each system
    (allocating is the costly step); this allocates one more node, the one being drawn,
    judged by the system and profile that judged it in the answer. A node's cpuset
    depends on that node alone, so only it is judged.
    """
    alone = replace(snapshot, nodes=tuple(n for n in snapshot.nodes if n.name == row.node))
    name = question.pod_scheduler_name
    judge = resolve_judge(question.spec, name, profiles, Scheduler(question.scheduler))
    result = evaluate(
        alone,
        question.spec,
        scheduler=row.system,
        scoring=question.scoring,
        weights=question.weights,
        detailed=1,
        profile=judge.profile,
    )
    return result.verdict(row.node).cpuset


def focus_remark(
    row: VerdictRow, best: str | None, asked: str | None, highlight: frozenset[int] | None
) -> str:
    """Why this node is drawn, and why no core is highlighted when none is."""
    parts = []
    if row.node != best and asked is None and best is not None:
        parts.append(
            f"The best node, {best}, publishes no per-CPU layout; {row.node} (rank {row.rank}) "
            "is the best-ranked fitting node that does."
        )
    if not row.fits:
        first = row.reasons[0] if row.reasons else "no room"
        more = f" (and {len(row.reasons) - 1} more reasons)" if len(row.reasons) > 1 else ""
        parts.append(f"{row.node} does not take this pod: {_shortened(first)}{more}.")
    elif not highlight and row.has_cpu_layout:
        parts.append(
            f"The simulation picks no CPUs for this pod on {row.node}: its scheduler "
            f"({row.system}) assigns NUMA zones only. Koordinator binds CPUs for QoS LSR/LSE "
            "pods; the kubelet's static CPU manager pins a Guaranteed pod's whole CPUs on "
            "nodes scheduler-plugins judges."
        )
    return " ".join(parts)


def _shortened(text: str, limit: int = 200) -> str:
    """Upstream messages can list hundreds of NUMA masks; a sentence keeps the start."""
    return text if len(text) <= limit else text[: limit - 1] + "…"


def zone_views(node: NodeSnapshot | None, chosen: Iterable[int]) -> tuple[ZoneView, ...]:
    if node is None:
        return ()
    picked = set(chosen)
    return tuple(
        ZoneView(
            numa_id=zone.numa_id,
            name=zone.name,
            cpu_allocatable=_amount(zone.resources, "cpu", "allocatable"),
            cpu_available=_amount(zone.resources, "cpu", "available"),
            memory_available=_amount(zone.resources, "memory", "available"),
            chosen=zone.numa_id in picked,
        )
        for zone in node.zones
    )


def _amount(resources: Mapping[str, Any], name: str, kind: str) -> int | None:
    amounts = resources.get(name)
    return None if amounts is None else int(getattr(amounts, kind))


def cpu_note(spec: PodSpec) -> str:
    """Whether the pod would get exclusive cores, in one sentence."""
    cpus = [c.requests.get("cpu", 0) for c in spec.containers]
    whole = bool(cpus) and all(cpu > 0 and cpu % 1000 == 0 for cpu in cpus)
    if spec.qos_class is QoSClass.GUARANTEED and whole:
        return (
            "Guaranteed with whole CPUs: the kubelet's static CPU manager gives it exclusive "
            "cores; Crane pins them with cpu-policy exclusive, Koordinator binds CPUs for QoS "
            "LSR/LSE."
        )
    return (
        "Not a Guaranteed pod with whole CPUs in every container: the kubelet's static CPU "
        "manager keeps it in the shared pool (Koordinator LSR/LSE can still bind CPUs)."
    )


def top_reasons(nodes: Sequence[Mapping[str, Any]], limit: int = TOP_REASONS) -> list[ReasonCount]:
    """The checks that refuse most nodes, each with how many nodes and one example."""
    refused = ((verdict["node"], verdict["reasons"]) for verdict in nodes if not verdict["fits"])
    return reasons_by_check(refused)[:limit]


def reasons_by_check(refused: Iterable[tuple[str, Iterable[str]]]) -> list[ReasonCount]:
    """(node, reason texts ending "; <check>") grouped by check, most nodes first: how many
    nodes each check refuses, and the first of them as an example."""
    counts: dict[str, list[str]] = {}
    for node, reasons in refused:
        checks: dict[str, str] = {}
        for reason in reasons:
            checks.setdefault(reason.rpartition("; ")[2] or reason, f"{node}: {reason}")
        for check, example in checks.items():
            counts.setdefault(check, []).append(example)
    ranked = sorted(counts.items(), key=lambda item: (-len(item[1]), item[0]))
    return [ReasonCount(check, len(examples), examples[0]) for check, examples in ranked]


def placement_rows(placements: Iterable[Mapping[str, Any]]) -> list[PlacementRow]:
    return [
        PlacementRow(
            replica=p["replica"] + 1,
            node=p["node"],
            zones=zones_text(p["numa_zones"]),
            cpuset=format_cpulist(p["cpuset"]) if p["cpuset"] else "",
        )
        for p in placements
    ]


AGE_UNITS = (("d", 86400), ("h", 3600), ("min", 60))


def age_text(seconds: float | None) -> str:
    """How old the simulated data was, e.g. "4 min"; "unknown" without a data time."""
    if seconds is None:
        return "unknown"
    for unit, size in AGE_UNITS:
        if seconds >= size:
            return f"{int(seconds // size)} {unit}"
    return f"{int(seconds)} s"
