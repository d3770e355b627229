"""Cluster what-if: where would this pod land, on which cores, and why not elsewhere.

`evaluate` judges one pod against every node of a snapshot and ranks them;
`place` binds replicas one after another, each seeing the ones before, and
counts how many more would fit. Nodes judged by scheduler-plugins are decided in
bulk on numpy columns (`schedulerplugins.fast.vector`); every other node, and every node the
columns cannot decide, goes through the system's reference reproduction. Only
the top-ranked nodes get the costly allocation step (cpuset, annotations).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from scheduler_api.engine.crane.cache import kept_zones
from scheduler_api.engine.koordinator.cache import kept_books
from scheduler_api.engine.koordinator.reference.state import KoordConfig
from scheduler_api.engine.model.snapshot import (
    ClusterSnapshot,
    NodeSnapshot,
    PodSpec,
    ReservationSnapshot,
)
from scheduler_api.engine.schedulerplugins.reference.match import ScoringStrategy
from scheduler_api.engine.whatif import crosscheck
from scheduler_api.engine.whatif.cache import index_of
from scheduler_api.engine.whatif.judge import SYSTEM_BY_CODE, Judgement, NodeVerdict, SharedVerdicts
from scheduler_api.engine.whatif.profiles import SchedulerProfile
from scheduler_api.engine.whatif.rules import node_rules
from scheduler_api.engine.whatif.systems import (
    SYSTEM_OF_FLAVOUR,
    Scheduler,
    SystemConfigs,
    check_weights,
    parse_scheduler,
    parse_scoring,
)

__all__ = [
    "Capacity",
    "NodeVerdict",
    "Placement",
    "Scheduler",
    "SharedVerdicts",
    "WhatIfResult",
    "evaluate",
    "place",
    "prepare",
]

DEFAULT_DETAILED = 3
RULES_BY_ROW = "rules_by_row"  # the index memo's key of `_rules_by_row`
CAPACITY_LIMIT_PER_NODE = 10_000


@dataclass(frozen=True, slots=True)
class Placement:
    """Where replica `replica` (0-based) went; node None when nothing could take it.

    `system` is the system whose nodes it was placed among (under `auto`, each system's
    nodes take the replicas apart: see `place`)."""

    replica: int
    node: str | None
    numa_zones: tuple[int, ...] = ()
    cpuset: frozenset[int] | None = None
    system: Scheduler | None = None


@dataclass(frozen=True, slots=True)
class Capacity:
    """How many more of the pod fit, per node (each node filled alone) and in total."""

    total: int
    per_node: Mapping[str, int]
    capped: tuple[str, ...] = ()


class WhatIfResult:
    """The ranked verdicts of one what-if; per-node detail is built when first asked for.

    `ranking` (node names, best first), `best` and `fit_count` are cheap; `nodes`
    materialises every node's verdict with its reasons.
    """

    def __init__(
        self,
        judgement: Judgement,
        *,
        scoring: ScoringStrategy | None,
        data_age_seconds: float | None,
        placements: tuple[Placement, ...] = (),
        capacity: Capacity | None = None,
        profile: SchedulerProfile | None = None,
    ) -> None:
        self._judgement = judgement
        self.scheduler = judgement.scheduler
        self.profile = profile
        self.configs = judgement.configs
        self.scoring = scoring
        self.data_age_seconds = data_age_seconds
        self.placements = placements
        self.capacity = capacity
        self._nodes: tuple[NodeVerdict, ...] | None = None
        self._rules: _KeptRules | None = None

    @property
    def ranking(self) -> tuple[str, ...]:
        return self._judgement.ranked_names()

    @property
    def fit_count(self) -> int:
        return self._judgement.fit_count()

    @property
    def systems(self) -> tuple[Scheduler, ...]:
        """The systems that judged some node, in the order the ranking groups them."""
        return self._judgement.present_systems()

    def fit_count_of(self, system: Scheduler) -> int:
        return self._judgement.fit_count(system)

    def rejected_count_of(self, system: Scheduler) -> int:
        """Nodes of `system` its scheduler binds but the kubelet would reject."""
        return self._judgement.rejected_count(system)

    def capacity_by_system(self) -> dict[Scheduler, int]:
        """`capacity.total` split by the system that judged each node."""
        totals: dict[Scheduler, int] = {}
        if self.capacity is not None:
            judgement = self._judgement
            for node, count in self.capacity.per_node.items():
                system = judgement.system(judgement.row_of(node))
                totals[system] = totals.get(system, 0) + count
        return totals

    def best_of(self, system: Scheduler) -> NodeVerdict | None:
        row = self._judgement.best_row(system)
        return None if row is None else self._judgement.verdict(row)

    @property
    def best(self) -> NodeVerdict | None:
        """The top-ranked node if it fits, with its cpuset and annotations."""
        first = self._judgement.best_row()
        return None if first is None else self._judgement.verdict(first)

    @property
    def nodes(self) -> tuple[NodeVerdict, ...]:
        if self._nodes is None:
            self._nodes = self._judgement.verdicts(self._judgement.order())
        return self._nodes

    def shared_verdicts(self) -> SharedVerdicts:
        """`nodes` for a writer that encodes them all: see `SharedVerdicts`."""
        return self._judgement.shared_verdicts()

    def verdict(self, node: str) -> NodeVerdict:
        return self._judgement.verdict(self._judgement.row_of(node))

    def row_of(self, node: str) -> int:
        """The node's row: its position in `shared_verdicts().names` and `rules_by_row`."""
        return self._judgement.row_of(node)

    def rules_of(self, node: str) -> tuple[str, ...]:
        """The rules the node's system, and the kubelet behind it, judged `node` by
        (`rules.node_rules`)."""
        return self.rules_by_row()[self._judgement.row_of(node)]

    def rules_by_row(self) -> list[tuple[str, ...]]:
        """`rules_of` of every node, by its row (the order of `shared_verdicts().names`):
        worked out once per snapshot and systems, so a writer of thousands of nodes looks
        each up by row."""
        return self._kept_rules().rules

    def rule_codes(self) -> tuple[list[int], list[tuple[str, ...]]]:
        """(each row's list of rules as a number; the lists by number, some perhaps no
        longer any row's after a refresh): `rules_by_row` for a writer that names each
        list once."""
        kept = self._kept_rules()
        return kept.codes, kept.distinct

    def _kept_rules(self) -> _KeptRules:
        if self._rules is None:
            self._rules = _rules_by_row(self._judgement)
        return self._rules


@dataclass(frozen=True, slots=True)
class _KeptRules:
    """`rules_by_row` of an index's nodes under one set of systems, kept in its memo,
    with each row's list numbered (`rule_codes`)."""

    systems: bytes
    nodes: list[NodeSnapshot]
    rules: list[tuple[str, ...]]
    codes: list[int]
    distinct: list[tuple[str, ...]]

    def carried(self) -> _KeptRules:
        """Kept for a refreshed index (`NRTIndex.refreshed`): its unchanged rows are the
        same node objects, and only the others are worked out again."""
        return self


def _rules_by_row(judgement: Judgement) -> _KeptRules:
    """`node_rules` of every row, kept on the index for the next what-if over the same
    nodes judged by the same systems: rows whose node is the same object keep their
    rules, the others are worked out again (a refreshed snapshot changes a few)."""
    index, systems = judgement.index, judgement.systems.tobytes()
    kept = index.memo.get(RULES_BY_ROW)
    if (
        isinstance(kept, _KeptRules)
        and kept.systems == systems
        and len(kept.nodes) == len(index.nodes)
    ):
        found = _rules_kept_from(judgement, kept)
    else:
        rules = [
            node_rules(node, SYSTEM_BY_CODE[code])
            for node, code in zip(index.nodes, judgement.systems.tolist(), strict=True)
        ]
        numbers: dict[tuple[str, ...], int] = {}
        numbered = [numbers.setdefault(rule, len(numbers)) for rule in rules]
        found = _KeptRules(systems, list(index.nodes), rules, numbered, list(numbers))
    index.memo[RULES_BY_ROW] = found
    return found


def _rules_kept_from(judgement: Judgement, kept: _KeptRules) -> _KeptRules:
    """`kept` with the rows whose node is another object worked out again (the same
    object when none is); a list new to the index takes the next number."""
    nodes = judgement.index.nodes
    stale = [row for row, node in enumerate(nodes) if node is not kept.nodes[row]]
    if not stale:
        return kept
    rules, numbered = list(kept.rules), list(kept.codes)
    numbers = {rule: code for code, rule in enumerate(kept.distinct)}
    for row in stale:
        rules[row] = node_rules(nodes[row], SYSTEM_BY_CODE[int(judgement.systems[row])])
        numbered[row] = numbers.setdefault(rules[row], len(numbers))
    return _KeptRules(kept.systems, list(nodes), rules, numbered, list(numbers))


def prepare(snapshot: ClusterSnapshot) -> None:
    """Build now what every what-if on `snapshot` reads and no pod changes.

    That is the columns of its nodes, each Koordinator node's books (view and
    allocation), and each Crane node's claimed zones. Each is otherwise built by the
    first question that needs it: about a second on 5,000 nodes, paid by whichever user
    asks first, per process. A cache that keeps snapshots between what-ifs calls this
    when it builds one. Nodes kept from an earlier snapshot are already prepared and
    cost nothing.
    """
    index_of(snapshot)
    config = KoordConfig()  # what-ifs change scoring and weights, never the books' key
    bound: dict[str, list[ReservationSnapshot]] = {}
    for reservation in snapshot.reservations:
        bound.setdefault(reservation.node_name, []).append(reservation)
    for node in snapshot.nodes:
        system = SYSTEM_OF_FLAVOUR[node.flavour]
        if system is Scheduler.KOORDINATOR:
            kept_books(node, config, bound.get(node.name, ()))
        elif system is Scheduler.CRANE:
            kept_zones(node)


def _judge(
    snapshot: ClusterSnapshot,
    pod: PodSpec,
    scheduler: str,
    scoring: str | None,
    weights: Mapping[str, int] | None,
    detailed: int,
    profile: SchedulerProfile | None = None,
) -> tuple[Judgement, ScoringStrategy | None]:
    system = parse_scheduler(scheduler)
    strategy = parse_scoring(scoring)
    base = SystemConfigs(nrt=profile.nrt, koordinator=profile.koordinator) if profile else None
    configs = SystemConfigs.build(strategy, check_weights(weights), base=base)
    judgement = Judgement(
        index_of(snapshot), snapshot.reservations, pod, system, configs, detailed=detailed
    )
    if crosscheck.enabled():
        crosscheck.check_verdicts(judgement)
    return judgement, strategy


def evaluate(
    snapshot: ClusterSnapshot,
    pod: PodSpec,
    *,
    scheduler: str = "auto",
    scoring: str | None = None,
    weights: Mapping[str, int] | None = None,
    detailed: int = DEFAULT_DETAILED,
    profile: SchedulerProfile | None = None,
) -> WhatIfResult:
    """Judge `pod` on every node; nodes come ranked (fits, then score, then name).

    `scheduler` is auto, scheduler-plugins, crane, koordinator or default; `profile`
    the scheduler profile whose plugin arguments apply (its system is `scheduler`'s
    business); `scoring` a scheduler-plugins strategy (Koordinator takes
    Least/MostAllocated) and `weights` resource weights override the profile's. The
    `detailed` top nodes of each system also get their cpuset. Raises ValueError for an
    unknown scheduler, strategy or a bad weight.
    """
    judgement, strategy = _judge(snapshot, pod, scheduler, scoring, weights, detailed, profile)
    return WhatIfResult(
        judgement, scoring=strategy, data_age_seconds=snapshot.data_age_seconds, profile=profile
    )


def place(
    snapshot: ClusterSnapshot,
    pod: PodSpec,
    replicas: int,
    *,
    scheduler: str = "auto",
    scoring: str | None = None,
    weights: Mapping[str, int] | None = None,
    detailed: int = DEFAULT_DETAILED,
    capacity: bool = True,
    profile: SchedulerProfile | None = None,
) -> WhatIfResult:
    """Bind `replicas` copies of `pod` one after another, each on the best node left.

    Each placement is assumed (the node's books updated as its scheduler would)
    before the next one is judged. `nodes` in the result are the verdicts for the
    first replica; `capacity` counts how many copies each node could still take.
    Under `auto` with nodes of several systems, each system's nodes take the replicas
    apart, as if the pod were sent to that system: scores of different schedulers are
    never compared.
    """
    if isinstance(replicas, bool) or not isinstance(replicas, int) or replicas < 0:
        raise ValueError(f"replicas must be a whole number ≥ 0; got {replicas!r}")
    judgement, strategy = _judge(snapshot, pod, scheduler, scoring, weights, detailed, profile)
    working = judgement.working_copy()
    groups: tuple[Scheduler | None, ...] = (None,)
    if judgement.scheduler is Scheduler.AUTO:
        groups = judgement.present_systems() or (None,)
    placements = tuple(
        _place_one(working, replica, system) for system in groups for replica in range(replicas)
    )
    return WhatIfResult(
        judgement,
        scoring=strategy,
        data_age_seconds=snapshot.data_age_seconds,
        placements=placements,
        capacity=count_capacity(judgement) if capacity else None,
        profile=profile,
    )


def _place_one(working: Judgement, replica: int, system: Scheduler | None) -> Placement:
    while (row := working.best_row(system)) is not None:
        bound = working.bind(row, replica)
        if bound is not None:
            name, zones, cpus = working.name(row), bound.numa_zones, bound.cpuset
            return Placement(replica, name, zones, cpus, working.system(row))
    return Placement(replica, None, system=system)


def count_capacity(judgement: Judgement) -> Capacity:
    """cluster-capacity's question per node: fill it alone until the pod no longer fits."""
    counted = judgement.fill_all(CAPACITY_LIMIT_PER_NODE)
    if crosscheck.enabled():
        crosscheck.check_counts(judgement, counted, CAPACITY_LIMIT_PER_NODE)
    per_node = dict(counted)
    capped = [node for node, count in counted if count >= CAPACITY_LIMIT_PER_NODE]
    return Capacity(sum(per_node.values()), per_node, tuple(capped))
