"""One pod judged against every node: bulk verdicts, ranking, and per-node detail on demand."""

from __future__ import annotations

from collections.abc import Callable, Hashable, Mapping, Sequence
from dataclasses import replace
from typing import NamedTuple, cast

import numpy as np

from scheduler_api.engine.kubelet.cache import node_shared_topology
from scheduler_api.engine.kubelet.fast.hints import cpu_hints_counted
from scheduler_api.engine.kubelet.fast.memory_hints import calculate_hints_counted
from scheduler_api.engine.kubelet.reference.admission import (
    kubelet_pinning,
)
from scheduler_api.engine.kubelet.reference.node_config import (
    KUBELET_MODELLED,
)
from scheduler_api.engine.model.decided import UNDECIDED
from scheduler_api.engine.model.kubernetes import pod_level_requests_set, pod_request
from scheduler_api.engine.model.results import (
    EMPTY_ANNOTATIONS,
    PlacementResult,
    Reason,
    ReasonCheck,
    refused,
)
from scheduler_api.engine.model.snapshot import NodeSnapshot, PodSpec, ReservationSnapshot
from scheduler_api.engine.schedulerplugins.fast.count_vector import node_fit_counts
from scheduler_api.engine.schedulerplugins.fast.vector import (
    NO_SCORE,
    Bools,
    Ints,
    NRTIndex,
    node_fit,
    node_fit_refusals,
)
from scheduler_api.engine.schedulerplugins.reference.common import resolve_topology_manager
from scheduler_api.engine.schedulerplugins.reference.match import passed_verdict
from scheduler_api.engine.whatif.admission import (
    KUBELET_PINS,
    REJECTED_NOTE,
    Admission,
    KnownKubelet,
    admission_without_pinning,
    admits_what_scheduler_plugins_binds,
    asks_exclusive_cpus,
    kubelet_aligns,
)
from scheduler_api.engine.whatif.assume import assume, book_reservation
from scheduler_api.engine.whatif.cache import kubelet_admission
from scheduler_api.engine.whatif.families import FAMILIES, judge_node
from scheduler_api.engine.whatif.systems import (
    SYSTEM_OF_FLAVOUR,
    Scheduler,
    SystemConfigs,
    reads_pod_level_requests,
)

SYSTEM_CODES = {system: code for code, system in enumerate(Scheduler)}
SYSTEM_BY_CODE = tuple(Scheduler)
ALLOCATE_IS_EVALUATE = frozenset(s for s, family in FAMILIES.items() if not family.picks_cpus)
KUBELET_PIN_CODES = [SYSTEM_CODES[system] for system in KUBELET_PINS]
PASSED_NOTES_BY = SYSTEM_CODES[Scheduler.SCHEDULER_PLUGINS]  # the rest pass without notes
RESERVATIONS_BY_NODE = "reservations-by-node"  # index memo: (reservations, grouped by node)
NAMES = "names"  # index memo: the node names by row


class NodeVerdict(NamedTuple):
    """One node's answer. `cpuset` is None unless the node was allocated in detail (or
    the kubelet's static CPU manager was run for its admission).

    Two stages, as in reality: `scheduler_fits` (would the scheduler bind it here) and
    `admission` (would the kubelet then admit it; None when the scheduler refuses).
    `fits` is both. A NamedTuple rather than a frozen dataclass: a what-if builds one
    per node (5,000 at a time), and a frozen dataclass costs about four times as much."""

    node: str
    system: Scheduler
    fits: bool
    score: int | None
    reasons: tuple[Reason, ...] = ()
    numa_zones: tuple[int, ...] = ()
    cpuset: frozenset[int] | None = None
    annotations: Mapping[str, str] = EMPTY_ANNOTATIONS
    notes: tuple[str, ...] = ()
    detailed: bool = False
    scheduler_fits: bool = False
    admission: Admission | None = None


class SharedVerdicts(NamedTuple):
    """Every node's verdict, best first, for a writer of thousands of them at once.

    Most verdicts differ only in their node name and score. Rows whose verdicts agree
    in everything else share a `keys` entry: a row the columns passed (fits, no reasons,
    no cpuset) by its system, NUMA node and policy group (which decide its notes); a
    row settled by a result object by that object and its system. Their node, fits and
    score are in `names`, `fits` and `scores` (all by row); `verdict(row)` builds the
    whole NodeVerdict, which a writer needs once per key. A row whose key is None
    (detailed, refused on the columns, or already built) is read through `verdict`
    alone. Either way `verdict(row)` is the reference: what `Judgement.verdicts` gives.
    """

    order: list[int]
    names: Sequence[str]
    fits: list[bool]
    scores: list[int | None]
    keys: list[Hashable | None]
    verdict: Callable[[int], NodeVerdict]


def _with_pinning(result: PlacementResult, node: NodeSnapshot, pod: PodSpec) -> PlacementResult:
    """Add what the kubelet would pin behind a scheduler that picks no CPUs; a pod the
    kubelet would refuse at admission does not fit (see `rejected_by_kubelet`)."""
    if not result.fits or result.cpuset is not None:
        return result
    topology = node_shared_topology(node)
    pinning = kubelet_pinning(
        node, pod, topology=topology, hints=cpu_hints_counted, memory_hints=calculate_hints_counted
    )
    if pinning.reason is not None:
        return rejected_by_kubelet(result, pinning.reason)
    return replace(result, cpuset=pinning.cpuset)


def rejected_by_kubelet(result: PlacementResult, reason: Reason) -> PlacementResult:
    """The scheduler's verdict `result` after the kubelet refused the pod at admission:
    it no longer fits; its score stays (the scheduler would still rank the node so)."""
    notes = (*result.notes, REJECTED_NOTE)
    return replace(result, fits=False, reasons=result.reasons + (reason,), notes=notes)


def _admission_reason(admission: Admission) -> Reason:
    return Reason(ReasonCheck.KUBELET_ADMISSION, message=admission.reason)


def _raw_score(result: PlacementResult) -> int:
    """A verdict's score as the judgement ranks it: NO_SCORE unless it fits with one."""
    return int(NO_SCORE) if result.score is None or not result.fits else result.score


def _zones_of(numa: int) -> tuple[int, ...]:
    """The NUMA zones of a column verdict (-1: none chosen)."""
    return (numa,) if numa >= 0 else ()


def _kubelet_pinned(result: PlacementResult, system: Scheduler) -> frozenset[int] | None:
    """CPUs the kubelet pins (Koordinator's cpusets are koordlet's, already booked)."""
    return result.cpuset if system in KUBELET_PINS else None


class Judgement:
    """Verdicts of one pod on every node of an index, kept as arrays for ranking."""

    def __init__(
        self,
        index: NRTIndex,
        reservations: Sequence[ReservationSnapshot],
        pod: PodSpec,
        scheduler: Scheduler,
        configs: SystemConfigs,
        *,
        detailed: int,
    ) -> None:
        self.index, self.reservations, self.pod = index, tuple(reservations), pod
        self._by_node: dict[str, tuple[ReservationSnapshot, ...]] | None = None
        self.scheduler, self.configs, self.detailed = scheduler, configs, detailed
        self.request = pod_request(pod)  # as a scheduler reading spec.resources counts it
        self.systems = self._systems()
        self._requests: dict[Scheduler, dict[str, int]] = {}
        size = len(index.nodes)
        self.fits: Bools = np.zeros(size, np.bool_)
        self.score: Ints = np.full(size, NO_SCORE, np.int64)
        self.numa: Ints = np.full(size, -1, np.int64)  # the NUMA node chosen (-1: none)
        self.exact: dict[int, PlacementResult] = {}
        self.cache: dict[int, NodeVerdict] = {}
        self._passed: dict[int, tuple[str, ...]] = {}  # notes per policy group
        passed = self._node_fit()  # the shared filters
        self._settle_node_fit_refusals(~passed)
        decided = ~passed
        # each family judging some row decides what its columns can of its rows
        self.columns = {system: FAMILIES[system].columns(size) for system in self.present_systems()}
        for system, columns in self.columns.items():
            rows = passed if len(self.columns) == 1 else passed & self._rows_of(system)
            decided |= columns.settle(self, rows)
        for row in np.flatnonzero(~decided).tolist():
            self._record_judged(row)
        self._top: frozenset[int] | None = None
        self._admit_all()

    # --- the kubelet's admission: the second stage of every verdict -------------------

    def _admit_all(self) -> None:
        """Run the kubelet's admission on every row its scheduler binds and whose static
        CPU manager can be reproduced; the other rows' admission needs no CPU manager
        (`admission_without_pinning`) and is given when their verdict is built."""
        self.scheduler_fits = self.fits.copy()
        self.admissions: dict[int, Admission] = {}
        # the kubelet's managers act on Guaranteed pods only (CPUs, and memory where the
        # Static Memory Manager runs): the rows they may refuse need the second stage
        self.exclusive = kubelet_aligns(self.pod)
        self._modelled: Bools | None = None
        self._copy_by_copy: Bools | None = None
        self._exclusive_cpus: bool | None = None
        if not self.exclusive:
            return
        rows = np.flatnonzero(self.fits & self._kubelet_modelled())
        groups = self.index.kubelet_group[rows]
        for group in np.unique(groups).tolist():
            members = rows[groups == group].tolist()
            # rows of one group: kubelets reading the same inputs answer alike
            admission = kubelet_admission(self.index.nodes[members[0]], self.pod)
            for row in members:
                self._admit_row(row, admission)

    def _kubelet_modelled(self) -> Bools:
        """Rows judged by a system behind which the kubelet pins, on nodes whose static
        CPU manager is reproduced, or for a pod without whole CPUs whose Static Memory
        Manager is (binding a pod changes neither: kept)."""
        if self._modelled is None:
            modelled: Bools = np.isin(self.systems, KUBELET_PIN_CODES)
            modelled &= self.index.kubelet_class == KUBELET_MODELLED
            if not self._asks_exclusive_cpus():  # only the Memory Manager may refuse it
                modelled &= self.index.memory_static
            self._modelled = modelled
        return self._modelled

    def _filled_copy_by_copy(self) -> Bools:
        """Rows whose copies the kubelet's admission of each copy must fill one by one:
        the kubelet-modelled ones, but where it admits every copy the scheduler binds
        (`admits_what_scheduler_plugins_binds`), which the scheduler's count then fills."""
        if self._copy_by_copy is None:
            rows = self._kubelet_modelled().copy()
            for row in np.flatnonzero(rows).tolist():
                node, system = self.index.nodes[row], self.system(row)
                rows[row] = not admits_what_scheduler_plugins_binds(node, self.pod, system)
            self._copy_by_copy = rows
        return self._copy_by_copy

    def _admit_row(self, row: int, admission: Admission | None = None) -> None:
        """The kubelet's admission on a row its scheduler binds; a refusal unfits it."""
        if admission is None:
            admission = kubelet_admission(self.index.nodes[row], self.pod)
        self.admissions[row] = admission
        if not admission.admitted:
            rejected = rejected_by_kubelet(self._plain(row), _admission_reason(admission))
            self.exact[row] = rejected
            self.fits[row] = False
            self.cache.pop(row, None)
            self._top = None

    def admission(self, row: int) -> Admission | None:
        """The kubelet's verdict on `row`, None when the scheduler does not bind there."""
        if not self.scheduler_fits[row]:
            return None
        found = self.admissions.get(row)
        if found is not None:
            return found
        node, system = self.index.nodes[row], self.system(row)
        known = KnownKubelet(
            int(self.index.kubelet_class[row]), bool(self.index.memory_static[row]),
            self._asks_exclusive_cpus(),
        )  # fmt: skip
        decided = admission_without_pinning(node, self.pod, system, self.exclusive, known)
        return decided if decided is not None else kubelet_admission(node, self.pod)

    def _asks_exclusive_cpus(self) -> bool:
        """`asks_exclusive_cpus(self.pod)`, worked out once (every row's admission asks)."""
        if self._exclusive_cpus is None:
            self._exclusive_cpus = asks_exclusive_cpus(self.pod)
        return self._exclusive_cpus

    def request_of(self, system: Scheduler) -> dict[str, int]:
        """What `system`'s NodeResourcesFit counts for the pod: `self.request`, unless
        the pod sets spec.resources and `system` does not read them (`POD_LEVEL_SUPPORT`)."""
        if not pod_level_requests_set(self.pod) or reads_pod_level_requests(system):
            return self.request
        if system not in self._requests:
            self._requests[system] = pod_request(self.pod, pod_level=False)
        return self._requests[system]

    def _request_groups(self) -> list[tuple[dict[str, int], Bools | None]]:
        """Each distinct NodeResourcesFit request with the rows it applies to (None: all
        rows). One group unless the pod sets spec.resources and the systems judging
        differ in reading them."""
        by_request: dict[tuple[tuple[str, int], ...], list[Scheduler]] = {}
        for system in self.present_systems():
            key = tuple(sorted(self.request_of(system).items()))
            by_request.setdefault(key, []).append(system)
        if len(by_request) <= 1:
            systems = next(iter(by_request.values()), [self.scheduler])
            return [(self.request_of(systems[0]), None)]
        return [
            (self.request_of(systems[0]), np.isin(self.systems, [SYSTEM_CODES[s] for s in systems]))
            for systems in by_request.values()
        ]

    def _node_fit(self) -> Bools:
        """The shared filters on every row, each with its own system's request."""
        groups = self._request_groups()
        if groups[0][1] is None:
            return node_fit(self.index, groups[0][0])
        passed: Bools = np.zeros(len(self.index.nodes), np.bool_)
        for request, rows in groups:
            assert rows is not None  # only a lone group covers every row
            passed |= node_fit(self.index, request) & rows
        return passed

    def _settle_node_fit_refusals(self, rows: Bools) -> None:
        """Rows of `rows` (refused by the shared filters) settled with those filters'
        verdicts, read off the columns: every system asking the same request refuses
        them alike. Equal reasons share one verdict (and so one encoded tail)."""
        for request, group_rows in self._request_groups():
            found = np.flatnonzero(rows if group_rows is None else rows & group_rows)
            if len(found):
                group, reasons = node_fit_refusals(self.index, request, found)
                verdicts = [refused(*found_reasons) for found_reasons in reasons]
                verdict_of = [verdicts[position] for position in group.tolist()]
                self.exact.update(zip(found.tolist(), verdict_of, strict=True))
        self.fits[rows] = False
        self.score[rows] = NO_SCORE

    def settle(self, rows: Bools, result: PlacementResult) -> None:
        """`result` is the exact verdict of every row of `rows` (shared, not copied)."""
        for row in np.flatnonzero(rows).tolist():
            self.exact[row] = result
        self.fits[rows] = result.fits
        self.score[rows] = _raw_score(result)

    def settle_row(self, row: int, result: PlacementResult) -> None:
        """`result` is the exact verdict of `row` (its fits is the caller's to set)."""
        self.exact[row] = result
        self.score[row] = _raw_score(result)

    def _systems(self) -> np.ndarray:
        if self.scheduler is not Scheduler.AUTO:
            return np.full(len(self.index.nodes), SYSTEM_CODES[self.scheduler], np.int64)
        cached = self.index.memo.get("auto-systems")
        if not isinstance(cached, np.ndarray):
            codes = [SYSTEM_CODES[SYSTEM_OF_FLAVOUR[f]] for f in self.index.flavours]
            cached = self.index.memo["auto-systems"] = np.array(codes, np.int64)
        return cached

    def present_systems(self) -> tuple[Scheduler, ...]:
        """The systems judging some row, in ranking order (kept with the index under
        `auto`)."""
        if not self.index.nodes:
            return ()
        if self.scheduler is not Scheduler.AUTO:
            return (self.scheduler,)
        cached = self.index.memo.get("auto-present")
        if not isinstance(cached, tuple):
            codes = np.unique(self._systems()).tolist()
            cached = self.index.memo["auto-present"] = tuple(SYSTEM_BY_CODE[c] for c in codes)
        return cached

    def _rows_of(self, system: Scheduler) -> Bools:
        rows: Bools = self.systems == SYSTEM_CODES[system]
        return rows

    def reservations_on(self, node: NodeSnapshot) -> tuple[ReservationSnapshot, ...]:
        """The reservations bound to `node`: the only ones any scheduler reads for it."""
        if self._by_node is None:
            self._by_node = self._reservations_by_node()
        return self._by_node.get(node.name, ())

    def _reservations_by_node(self) -> dict[str, tuple[ReservationSnapshot, ...]]:
        """The reservations grouped by node, kept with the index for the same tuple of
        them (what-ifs on one cached snapshot share it: a few thousand reservations
        grouped again for every question cost about a millisecond)."""
        kept = self.index.memo.get(RESERVATIONS_BY_NODE)
        if isinstance(kept, tuple) and kept[0] is self.reservations:
            return cast(dict[str, tuple[ReservationSnapshot, ...]], kept[1])
        grouped: dict[str, list[ReservationSnapshot]] = {}
        for reservation in self.reservations:
            grouped.setdefault(reservation.node_name, []).append(reservation)
        by_node = {name: tuple(group) for name, group in grouped.items()}
        self.index.memo[RESERVATIONS_BY_NODE] = (self.reservations, by_node)
        return by_node

    def system(self, row: int) -> Scheduler:
        return SYSTEM_BY_CODE[int(self.systems[row])]

    def name(self, row: int) -> str:
        return self.index.nodes[row].name

    def row_of(self, name: str) -> int:
        if name not in self.index.row_of:
            raise KeyError(f"no node {name!r} in this snapshot")
        return self.index.row_of[name]

    def judge_row(self, row: int) -> PlacementResult:
        """The family's verdict on `row` as its node is now (no allocation)."""
        return self._judge(row, allocate=False)

    def _judge(self, row: int, *, allocate: bool) -> PlacementResult:
        node = self.index.nodes[row]
        return judge_node(
            node, self.pod, self.system(row), self.configs, self.reservations_on(node),
            allocate=allocate, request=self.request_of(self.system(row)), fast=True,
        )  # fmt: skip

    def _record_judged(self, row: int) -> None:
        result = self._judge(row, allocate=False)
        self.exact[row] = result
        for columns in self.columns.values():
            columns.forget(row)
        self.fits[row] = result.fits
        self.score[row] = _raw_score(result)
        self.cache.pop(row, None)
        self._top = None

    def _rejudge(self, row: int) -> None:
        """Judge `row` again (its node changed), both stages."""
        self._record_judged(row)
        self.scheduler_fits[row] = self.fits[row]
        self.admissions.pop(row, None)
        if self.fits[row] and self.exclusive and self._kubelet_modelled()[row]:
            self._admit_row(row)

    # --- ranking ------------------------------------------------------------------------

    def _keys(self) -> np.ndarray:
        """Rank keys: fitting rows by score (-1 unscored), then rows the scheduler binds
        but the kubelet rejects (-2), then refused rows (-3)."""
        refused_key = np.where(self.scheduler_fits, -2, -3)
        return np.where(self.fits, np.where(self.score == NO_SCORE, -1, self.score), refused_key)

    def order(self) -> list[int]:
        """Rows best first: fitting before not, higher score first, then by name. Under
        `auto` each system's rows come together (in `SYSTEMS` order), ranked apart:
        scores of different schedulers are not comparable."""
        keys: tuple[np.ndarray, ...] = (self.index.name_rank, -self._keys())
        if self.scheduler is Scheduler.AUTO:
            keys = (*keys, self.systems)
        return list(np.lexsort(keys).tolist())

    def ranked_names(self) -> tuple[str, ...]:
        return tuple(self.index.nodes[row].name for row in self.order())

    def best_row(self, system: Scheduler | None = None) -> int | None:
        """The best fitting row (of `system`'s rows only, when given)."""
        fits = self.fits if system is None else self.fits & (self.systems == SYSTEM_CODES[system])
        if not fits.any():
            return None
        keys = np.where(fits, self._keys(), -4)
        candidates = np.flatnonzero(keys == keys.max())
        return int(candidates[np.argmin(self.index.name_rank[candidates])])

    def fit_count(self, system: Scheduler | None = None) -> int:
        if system is None:
            return int(self.fits.sum())
        return int((self.fits & (self.systems == SYSTEM_CODES[system])).sum())

    def rejected_count(self, system: Scheduler) -> int:
        """Rows of `system` its scheduler binds but the kubelet rejects."""
        rejected = self.scheduler_fits & ~self.fits & (self.systems == SYSTEM_CODES[system])
        return int(rejected.sum())

    def fitting_rows(self) -> list[int]:
        return list(np.flatnonzero(self.fits).tolist())

    def _is_top(self, row: int) -> bool:
        """Among the rows that get detail: the `detailed` best, and the best one always."""
        return row in self._top_rows()

    def _top_rows(self) -> frozenset[int]:
        """The `detailed` best rows of each system, and each system's best always."""
        if self._top is None:
            order = np.array(self.order(), np.int64)
            ordered_systems = self.systems[order]
            top: list[int] = []
            for system in self.present_systems():
                code = SYSTEM_CODES[system]
                top += order[ordered_systems == code][: self.detailed].tolist()
                best = self.best_row(system)
                top += [] if best is None else [best]
            self._top = frozenset(top)
        return self._top

    # --- per-node detail ----------------------------------------------------------------

    def verdict(self, row: int) -> NodeVerdict:
        if row not in self.cache:
            detailed = bool(self.fits[row]) and self._is_top(row)
            if not detailed and self._column_passed(row):
                return self._column_verdict(row)
            result = self._detail(row) if detailed else self._plain(row)
            return self._result_verdict(row, int(self.systems[row]), result, detailed)
        return self.cache[row]

    def _result_verdict(
        self, row: int, system: int, result: PlacementResult, detailed: bool
    ) -> NodeVerdict:
        admission = self.admission(row)
        cpuset = result.cpuset
        if cpuset is None and admission is not None and result.fits:
            cpuset = admission.cpuset  # what the kubelet's static CPU manager pinned
        verdict = self.cache[row] = NodeVerdict(
            self.index.nodes[row].name, SYSTEM_BY_CODE[system], result.fits, result.score,
            result.reasons, result.numa_zones, cpuset, result.annotations, result.notes,
            detailed, bool(self.scheduler_fits[row]), admission,
        )  # fmt: skip
        return verdict

    def _plain(self, row: int) -> PlacementResult:
        exact = self.exact.get(row)
        if exact is not None:
            return exact
        if self.fits[row]:  # decided by the columns: only the notes are left to add
            zones = self._column_zones(row)
            system, group = int(self.systems[row]), int(self.index.policy_group[row])
            notes = self._column_notes(row, system, group)
            return PlacementResult(True, int(self.score[row]), numa_zones=zones, notes=notes)
        return self._judge(row, allocate=False)  # the reasons it is refused

    def _column_passed(self, row: int) -> bool:
        return bool(self.fits[row]) and row not in self.exact

    def _column_zones(self, row: int) -> tuple[int, ...]:
        return _zones_of(int(self.numa[row]))

    def _column_verdict(self, row: int) -> NodeVerdict:
        """A row the columns passed, not detailed: `passed_verdict`'s answer, built at once."""
        system, score, numa = int(self.systems[row]), int(self.score[row]), int(self.numa[row])
        return self._passed_row(row, system, score, numa, int(self.index.policy_group[row]))

    def _passed_row(self, row: int, system: int, score: int, numa: int, group: int) -> NodeVerdict:
        """`_column_verdict` from the row's values (`verdicts` reads them in bulk)."""
        notes = self._column_notes(row, system, group)
        admission = self.admission(row)
        cpuset = admission.cpuset if admission is not None else None
        verdict = self.cache[row] = NodeVerdict(
            self.index.nodes[row].name, SYSTEM_BY_CODE[system], True, score, (),
            _zones_of(numa), cpuset, EMPTY_ANNOTATIONS, notes, False, True, admission,
        )  # fmt: skip
        return verdict

    def _column_notes(self, row: int, system: int, group: int) -> tuple[str, ...]:
        """The notes of a row the columns passed: on a scheduler-plugins row
        `passed_verdict`'s, which read only the pod, the config, the node's flavour and
        its topology manager, so they are worked out once per policy group of the index.
        Koordinator's column verdicts carry none."""
        if system != PASSED_NOTES_BY:
            return ()
        notes = self._passed.get(group)
        if notes is None:
            node, tm = self.index.nodes[row], self.index.topology_managers[row]
            tm = tm or resolve_topology_manager(node.topology_policies, node.nrt_attributes)
            passed = passed_verdict(node, self.pod, self.configs.nrt, 0, (), tm)
            notes = self._passed[group] = passed.notes
        return notes

    def verdicts(self, rows: Sequence[int]) -> tuple[NodeVerdict, ...]:
        """`verdict` of each row. A what-if answers for every node: the rows the columns
        passed are built from the arrays read once, not element by element."""
        top = self._top_rows()
        fits, systems = self.fits.tolist(), self.systems.tolist()
        scores, numas = self.score.tolist(), self.numa.tolist()
        groups_of = self.index.policy_group.tolist()
        verdicts = []
        for row in rows:
            verdict = self.cache.get(row)
            if verdict is not None:
                pass
            elif row in top:
                verdict = self.verdict(row)
            elif (exact := self.exact.get(row)) is not None:
                verdict = self._result_verdict(row, systems[row], exact, False)
            elif fits[row]:
                system, score, numa = systems[row], scores[row], numas[row]
                verdict = self._passed_row(row, system, score, numa, groups_of[row])
            else:
                verdict = self.verdict(row)  # refused on the columns: judged for its reasons
            verdicts.append(verdict)
        return tuple(verdicts)

    def shared_verdicts(self) -> SharedVerdicts:
        """`verdicts(order())` in the form `SharedVerdicts` describes: no NodeVerdict is
        built for a row whose key another row already brought in."""
        systems, system_of = len(SYSTEM_BY_CODE), self.systems.tolist()
        fits, scores = self.fits.tolist(), self.score.tolist()
        passed = self.fits.copy()
        passed[list(self.exact)] = False
        numa = self.numa + 1  # -1 (no NUMA node chosen) is 0 here
        passed &= (numa >= 0) & (numa < 1 << 32)
        # the kubelet's class decides the admission of a row the CPU manager was not run on
        classes = self.index.kubelet_class if self.exclusive else np.zeros_like(self.systems)
        codes = ((self.index.policy_group * systems + self.systems) * 3 + classes) << 32 | numa
        keys: list[Hashable | None] = np.where(passed, codes, -1).tolist()
        for row in np.flatnonzero(~passed).tolist():
            keys[row] = None  # refused on the columns: judged for its reasons
        class_of = classes.tolist()
        for row, result in self.exact.items():  # the result lives as long as self
            keys[row] = (id(result), system_of[row], class_of[row])
            fits[row], scores[row] = result.fits, result.score
        for row in (*self._top_rows(), *self.cache, *self.admissions):
            keys[row] = None
        return SharedVerdicts(self.order(), self.names(), fits, scores, keys, self.verdict)

    def _detail(self, row: int) -> PlacementResult:
        system, node = self.system(row), self.index.nodes[row]
        if system in ALLOCATE_IS_EVALUATE and (row in self.exact or self.fits[row]):
            # these schedulers pick no CPUs: their verdict is already the allocation
            return self._with_kubelet(self._plain(row), node, system)
        return self._allocate(node, system)

    def _allocate(self, node: NodeSnapshot, system: Scheduler) -> PlacementResult:
        result = judge_node(
            node, self.pod, system, self.configs, self.reservations_on(node),
            allocate=True, request=self.request_of(system), fast=True,
        )  # fmt: skip
        return self._with_kubelet(result, node, system)

    def _with_kubelet(
        self, result: PlacementResult, node: NodeSnapshot, system: Scheduler
    ) -> PlacementResult:
        if system in KUBELET_PINS:
            return _with_pinning(result, node, self.pod)
        return result

    def _assume(
        self, node: NodeSnapshot, result: PlacementResult, system: Scheduler, uid: str
    ) -> NodeSnapshot:
        pinned = _kubelet_pinned(result, system)
        return assume(node, self.pod, result, system, uid=uid, pinned=pinned)

    # --- placing replicas ---------------------------------------------------------------

    def working_copy(self) -> Judgement:
        """A copy whose index `bind` may change; this judgement keeps its snapshot."""
        clone = object.__new__(Judgement)
        clone.__dict__.update(self.__dict__)
        clone.index = self.index.copy()
        clone.fits, clone.score = self.fits.copy(), self.score.copy()
        clone.scheduler_fits, clone.admissions = self.scheduler_fits.copy(), dict(self.admissions)
        clone.columns = {system: columns.copy() for system, columns in self.columns.items()}
        clone.exact, clone.cache, clone._top = dict(self.exact), {}, None
        return clone

    def bind(self, row: int, replica: int) -> PlacementResult | None:
        """Place one replica on `row` and assume it; None (row closed) if Reserve fails."""
        result = self._detail(row)
        if not result.fits:
            self.fits[row] = self.scheduler_fits[row] = False
            self._top = None
            return None
        uid = f"{self.pod.uid or self.pod.name}-whatif-{replica}"
        node = self._assume(self.index.nodes[row], result, self.system(row), uid)
        self._book_reservation(result, self.system(row), uid)
        if not self.index.update(row, node):
            self.index.nodes[row] = node
        self._rejudge(row)
        return result

    def _book_reservation(self, result: PlacementResult, system: Scheduler, uid: str) -> None:
        """The reservation the bound replica was nominated to now counts it as an owner
        (only its node reads it, and that row is judged again next)."""
        booked = book_reservation(self.reservations, self.pod, result, system, uid=uid)
        if booked is not None:
            self.reservations, self._by_node = booked, None

    def fill_all(self, limit: int) -> list[tuple[str, int]]:
        """(node, copies it takes alone) for every fitting row, as `fill_node` counts them;
        scheduler-plugins rows are counted on the columns all at once."""
        rows = np.flatnonzero(self.fits)
        counts = self._column_counts(limit)
        if self.exclusive:  # the kubelet's admission of each copy: filled copy by copy
            counts = np.where(self._filled_copy_by_copy(), UNDECIDED, counts)
        counts = counts[rows]
        undecided = np.flatnonzero(counts == UNDECIDED).tolist()
        rows_list, counts_list = rows.tolist(), counts.tolist()
        for position in undecided:
            counts_list[position], _ = self.fill_node(rows_list[position], limit)
        names = self.names()
        return list(zip([names[row] for row in rows_list], counts_list, strict=True))

    def names(self) -> list[str]:
        """The node names by row (kept with the index: a working copy's are the same)."""
        names = self.index.memo.get(NAMES)
        if not isinstance(names, list):
            names = self.index.memo[NAMES] = [node.name for node in self.index.nodes]
        return names

    def _column_counts(self, limit: int) -> Ints:
        """Copies per row where a family's columns count them (each within the shared
        filters' count: `node_fit_counts`, worked out once if any asks); UNDECIDED
        elsewhere."""
        counts = np.full(len(self.index.nodes), UNDECIDED, np.int64)
        caps: list[Ints] = []

        def cap() -> Ints:
            if not caps:
                caps.append(self._node_fit_counts(limit))
            return caps[0]

        for columns in self.columns.values():
            counts = columns.counts(self, counts, limit, cap)
        return counts

    def _node_fit_counts(self, limit: int) -> Ints:
        """`node_fit_counts` on every row, each with its own system's request."""
        groups = self._request_groups()
        counted = node_fit_counts(self.index, groups[0][0], limit)
        for request, rows in groups[1:]:
            assert rows is not None  # only a lone group covers every row
            counted = np.where(rows, node_fit_counts(self.index, request, limit), counted)
        return counted

    def fill_node(self, row: int, limit: int) -> tuple[int, str]:
        """How many copies of the pod `row` takes alone, up to `limit`.

        Counted (`*_count` modules: per zone, or on Koordinator books updated in place)
        where that is exact; every other case fills copy by copy.
        """
        node = self.index.nodes[row]
        counted = None
        if not (self.exclusive and self._filled_copy_by_copy()[row]):
            counted = self.count_copies(node, self.system(row), limit, judged=self.exact.get(row))
        if counted is None:
            counted = self.fill_copy_by_copy(row, limit, fast=True)
        return counted, node.name

    def count_copies(
        self,
        node: NodeSnapshot,
        system: Scheduler,
        limit: int,
        *,
        judged: PlacementResult | None = None,
    ) -> int | None:
        """The copies `node` takes alone, counted; None where only filling can tell.

        `judged`: this judgement's verdict on `node` (Koordinator need not Filter the
        first copy again)."""
        return FAMILIES[system].count_copies(self, node, limit, judged)

    def fill_copy_by_copy(self, row: int, limit: int, *, fast: bool) -> int:
        """The reference fill: allocate, assume, judge the grown node again.

        `fast=False` is the reference throughout (every reservation, every NUMA mask
        allocated), which the property tests hold the counts against.
        """
        node, system, count = self.index.nodes[row], self.system(row), 0
        reservations = self.reservations_on(node) if fast else self.reservations
        while count < limit:
            result = judge_node(
                node, self.pod, system, self.configs, reservations,
                allocate=True, request=self.request_of(system), fast=fast,
            )  # fmt: skip
            result = self._with_kubelet(result, node, system)
            if not result.fits:
                break
            uid = f"capacity-{count}"
            node = self._assume(node, result, system, uid)
            booked = book_reservation(reservations, self.pod, result, system, uid=uid)
            reservations = reservations if booked is None else booked
            count += 1
        return count
