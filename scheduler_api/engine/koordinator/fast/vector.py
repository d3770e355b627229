"""Mirrors: koordinator.reference.plugin.evaluate, whatif.judge.Judgement.fill_copy_by_copy.

koord-scheduler's Filter, Score and capacity count on columns, for its commonest cases.

A cluster what-if judges every Koordinator node one by one through `koordinator.fast.filter_score`
(NodeRun, books, a hint walk, the merge, Score): about 150 µs a node. For one case
the whole answer follows from a few amounts per NUMA node, so it is worked out here
for every such node at once on numpy arrays of shape (nodes, NUMA nodes):

* the node: no CPU bind policy of its own (label or kubelet full-pcpus-only) or
  SpreadByPCPUs, the SingleNUMANode policy (label or NRT) or Restricted, NUMA nodes
  with unique ids in ascending order (at least two under Restricted), all publishing
  the same resources, a reference count of 1;
* the pod: PreFilter passes and does not skip; it binds no cpus, or binds whole cpus
  under a preferred bind policy with no exclusive policy (`binds_in_case`); it has no
  NUMA policy of its own other than SingleNUMANode, no singleNUMANodeExclusive=Required,
  no reservation affinity, does not ignore reservations, matches no owner of the node's
  reservations, and requests something the NUMA nodes publish.

There, with R a NUMA node's published amount and D what it holds less what unmatched
reservations' owners may reuse (`available_numa`: it leaves max(R - max(D, 0), 0)):

* the hint walk stops after single NUMA nodes: NUMA node p is a hint when it has some
  of every requested published resource and at least each requested amount;
* SingleNUMANode's merge keeps the hint with the highest NUMA score (the per-NUMA
  scorer over R and min(max(D, 0), R)), the lowest id on a tie: ids ascend, and a
  later hint as wide replaces the best only with a higher score;
* the allocation Filter then tries succeeds (distribute over one NUMA node places the
  whole request), and Score is the scorer over that NUMA node's R and max(D, 0);
* capacity (`koordinator.fast.count`'s single-NUMA fill): NUMA node p takes
  min over requested r of (R - a - D) // a + 1 copies (0 unless R >= a and
  R - a - D >= 0), and the node min(its node-level limit, the sum over p).

A pod binding n cpus also reads the books' cpus (`koordinator.fast.books.Books`, the same
for every such pod: only a required bind policy changes them): NUMA node p is a hint
only if cpu is published, p has n free cpus and the node n free cpus anywhere
(allocateCPUSet takes the whole request from p); Score counts every cpu the books
hold as the cpu in use; p takes min(its copies, free cpus in p // n) copies and the
node at most its free cpus // n (each copy takes n cpus off both, as
`koordinator.fast.count` assumes alike copies). Its nodes need a valid CPU topology
(bind_checks) and at least two NUMA nodes.

Restricted admits the narrowest preferred hint, so where some single NUMA node is a
hint its walk stops there too and its merge picks the same one; where none is, wider
masks may take the pod, and the row is left to the reference. Copies under Restricted
go on into wider masks once no single NUMA node takes one, so they are left to the
reference as well (`ColumnVerdicts.counted`).

A SpreadByPCPUs node requires its bind policy: it binds every whole-cpu pod, and its
books keep one cpu per core, trimming each NUMA node's cpu amount to those cpus
(`cpu_available`, read off the books). It is in the case for a pod that binds cpus of
its own accord (so `needed` is the same on every row); the bind checks ask only for a
valid topology. A copy takes the lowest cpu of as many cores, and whether a core
still offers one depends on which cpus earlier copies took, so its copies are left to
the reference.

A FullPCPUsOnly node under SingleNUMANode or Restricted (the third case's node, below)
is judged the same way, for a pod that binds cpus of its own accord: its books keep
whole free cores, trimming each NUMA node's cpu amount to their cpus; Filter first
refuses cpus that are no whole number of cores (the bind checks: left to the
reference). A copy takes whole cores inside one NUMA node, so each NUMA node loses
exactly the cpus it gave, and under SingleNUMANode its copies are counted here.

A SingleNUMANode node with one NUMA node is in the case too, for a pod that binds no
cpus. There the merge's single hint is every NUMA node, which SingleNUMANode turns
into no hint at all: the pod is admitted with no NUMA node, scored on the node's
allocatable and requested, and Reserve places no NUMA amounts, so only the
node-level filters limit its copies.

A second case is a node binding whole cores without any NUMA policy: FullPCPUsOnly
(label or kubelet option), no NUMA policy, a valid CPU topology whose cores each sit
whole in one NUMA node, a reference count of 1, unique NUMA ids; and a pod of n whole
cpus with no bind policy of its own but FullPCPUs, no NUMA or exclusive policy and no
reservation affinity (`pod_binds_whole_cores`). Filter runs the bind checks and one
attempt without a hint, which succeeds when the books under required FullPCPUs (whole
free cores) hold n cpus; Score is the node-level scorer; each copy takes n cpus as
whole cores, so the node takes (its whole free cores' cpus) // n copies.

A third case only finds refusals: where all NUMA nodes together hold too little for
the pod (`_nothing_fits`), no mask of any width allocates and Filter refuses with
"Unsatisfied NUMA <name>" for each requested published name. That is read off the
single-NUMA case's rows, and off FullPCPUsOnly nodes under SingleNUMANode or
Restricted (their cpu amounts trimmed to whole free cores). Such rows share one
verdict per set of published names: the caller judges one row with the reference and
gives its refusal to the rest.

Any other node none of whose NUMA nodes takes the pod is left to the reference (it
writes the refusal's reasons), as is every node outside the case. Property tests hold every
row to `koordinator.evaluate` and to the copy-by-copy fill.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace

import numpy as np

from scheduler_api.engine.koordinator import cache
from scheduler_api.engine.koordinator.fast.books import Books, books_of, layout_of
from scheduler_api.engine.koordinator.reference.numa import MAX_NODE_SCORE, is_scalar, is_scored
from scheduler_api.engine.koordinator.reference.plugin import (
    NodeRun,
    node_run,
    request_cpu_bind,
    resource_options,
)
from scheduler_api.engine.koordinator.reference.pod import PodState
from scheduler_api.engine.koordinator.reference.reservation import matches_owners
from scheduler_api.engine.koordinator.reference.state import (
    KoordConfig,
    add_numa,
    node_numa_policy,
)
from scheduler_api.engine.model.results import PlacementResult, Reason, refused
from scheduler_api.engine.model.snapshot import (
    CPUBindPolicy,
    CPUExclusivePolicy,
    NodeSnapshot,
    NUMATopologyPolicy,
    PodSpec,
    ReservationSnapshot,
)
from scheduler_api.engine.schedulerplugins.fast.vector import Bools, Ints, NRTIndex

MEMO_KEY = "koordinator-single-numa-columns"
# the per-row arrays (a carried copy copies them, a subset takes their rows)
CPU_ARRAYS = (
    "case", "valid", "numa_ids", "numa_free", "free_cpus", "held_cpus", "topology_valid",
    "whole_cores", "full_free", "per_core", "sums_case", "restricted", "spread",
    "cpu_available",
)  # fmt: skip
UNCOUNTED = np.int64(1 << 62)  # copies no NUMA amount limits (only the node-level filters)
ReservationsOn = Callable[[NodeSnapshot], tuple[ReservationSnapshot, ...]]


class SingleNUMAColumns:
    """Per row of an index: each NUMA node's id, R and D per resource (see the module
    docstring), for the rows in the node case. A row is built from one node and its
    reservations, and serves only while the index holds those very objects."""

    def __init__(self, count: int, width: int) -> None:
        self.width = width
        self.lock = threading.Lock()  # a row is built and read by one what-if at a time
        self.sources: list[tuple[NodeSnapshot, tuple[ReservationSnapshot, ...]] | None]
        self.sources = [None] * count
        self.case = np.zeros(count, np.bool_)  # built, and the node is in the case
        self.valid = np.zeros((count, width), np.bool_)
        self.numa_ids = np.zeros((count, width), np.int64)
        self.published: dict[str, Bools] = {}
        self.capacity: dict[str, Ints] = {}
        self.net_held: dict[str, Ints] = {}
        self.node_allocatable: dict[str, Ints] = {}
        self.node_requested: dict[str, Ints] = {}
        # the books' cpus (`koordinator.fast.books.Books`, under the node's required bind
        # policy if any), which a pod that binds cpus reads: free per NUMA node, free
        # anywhere, held
        self.numa_free = np.zeros((count, width), np.int64)
        self.free_cpus = np.zeros(count, np.int64)
        self.held_cpus = np.zeros(count, np.int64)
        self.topology_valid = np.zeros(count, np.bool_)
        # case rows under Restricted, and rows whose node requires SpreadByPCPUs: the
        # copies they take are left to the reference (`ColumnVerdicts.counted`)
        self.restricted = np.zeros(count, np.bool_)
        self.spread = np.zeros(count, np.bool_)
        # each NUMA node's cpu amount as books under a required bind policy trim it
        # (SpreadByPCPUs and third-case rows: `_available`)
        self.cpu_available = np.zeros((count, width), np.int64)
        # the second case: whole cores bound without a NUMA policy (`_binds_whole_cores`),
        # and the cpus its books (required FullPCPUs) leave free
        self.whole_cores = np.zeros(count, np.bool_)
        self.full_free = np.zeros(count, np.int64)
        self.per_core = np.zeros(count, np.int64)
        # the third: FullPCPUsOnly under SingleNUMANode or Restricted, read only to find
        # the nodes no NUMA mask can take the pod (`_refused_by_sums`); their books'
        # cpus (required FullPCPUs: whole free cores) are in `numa_free` and
        # `cpu_available`
        self.sums_case = np.zeros(count, np.bool_)

    def carried(self) -> SingleNUMAColumns:
        """A copy for a refreshed index: its unchanged rows (same node objects) still
        serve; `current` turns the changed ones down until they are built again."""
        clone = object.__new__(SingleNUMAColumns)
        clone.__dict__.update(self.__dict__)
        clone.sources = list(self.sources)
        clone.lock = threading.Lock()
        for name in CPU_ARRAYS:
            setattr(clone, name, getattr(self, name).copy())
        for name in ("published", "capacity", "net_held", "node_allocatable", "node_requested"):
            setattr(clone, name, {k: v.copy() for k, v in getattr(self, name).items()})
        return clone

    def current(self, row: int, node: NodeSnapshot, bound: tuple[ReservationSnapshot, ...]) -> bool:
        """Was `row` built from `node` and `bound` (the same objects)?"""
        source = self.sources[row]
        if source is None or source[0] is not node or len(source[1]) != len(bound):
            return False
        return all(a is b for a, b in zip(source[1], bound, strict=True))

    def build(self, row: int, run: NodeRun, bound: tuple[ReservationSnapshot, ...]) -> None:
        """Fill `row` from a NodeRun of a pod that matches none of its reservations."""
        self.sources[row] = (run.node, bound)
        self.case[row] = self.whole_cores[row] = self.sums_case[row] = False
        self.valid[row] = self.restricted[row] = self.spread[row] = False
        self.numa_free[row] = self.cpu_available[row] = 0
        self.free_cpus[row] = self.held_cpus[row] = 0
        self.full_free[row] = self.per_core[row] = 0
        self.topology_valid[row] = False
        for name in self.published:
            self.published[name][row] = False
            self.capacity[name][row] = 0
            self.net_held[name][row] = 0
        for name in self.node_allocatable:
            self.node_allocatable[name][row] = self.node_requested[name][row] = 0
        numa_ids = run.ctx.view.numa_nodes()
        if _node_in_case(run, numa_ids, self.width):
            self._build_numa(row, run, numa_ids)
            self._build_cpus(row, run, numa_ids)
            policy = node_numa_policy(run.node, run.ctx.view)
            self.restricted[row] = policy == NUMATopologyPolicy.RESTRICTED
            self.case[row] = True
        elif _binds_whole_cores(run, numa_ids):
            books = _full_pcpus_books(run)
            self.full_free[row] = books.free
            self.per_core[row] = layout_of(run).per_core
            self.whole_cores[row] = True
        elif _refused_by_sums(run, numa_ids, self.width):
            self._build_numa(row, run, numa_ids)
            books = _full_pcpus_books(run)
            self._trimmed_cpus(row, books, numa_ids)
            self.per_core[row] = layout_of(run).per_core
            self.sums_case[row] = True
            if _single_numa_merge(run, numa_ids):  # judged as the single-NUMA case too
                self.free_cpus[row], self.held_cpus[row] = books.free, books.held
                self.topology_valid[row] = True  # `_refused_by_sums` asks for a valid one
                policy = node_numa_policy(run.node, run.ctx.view)
                self.restricted[row] = policy == NUMATopologyPolicy.RESTRICTED
                self.case[row] = True
        else:
            return
        node = run.node
        for name in {*node.allocatable, *node.requested}:
            allocatable, requested = self._node_columns(name)
            allocatable[row] = node.allocatable.get(name, 0)
            requested[row] = node.requested.get(name, 0)

    def _build_numa(self, row: int, run: NodeRun, numa_ids: tuple[int, ...]) -> None:
        """Each NUMA node's id, R and D per resource (module docstring)."""
        view = run.ctx.view
        reusable = add_numa(run.ctx.restore.unmatched_used)
        for name in view.resource_names[0]:
            self._columns(name)[0][row] = True
        for position, numa in enumerate(numa_ids):
            self.valid[row, position] = True
            self.numa_ids[row, position] = numa
            held = run.ctx.state.resources.get(numa, {})
            kept = reusable.get(numa, {})
            for name, amount in view.resources_of(numa).items():
                _, capacity, net_held = self._columns(name)
                capacity[row, position] = amount
                net_held[row, position] = held.get(name, 0) - kept.get(name, 0)

    def _build_cpus(self, row: int, run: NodeRun, numa_ids: tuple[int, ...]) -> None:
        """The books' cpus as a pod binding cpus under a preferred policy of its own reads
        them: the books depend on the pod only through a required bind policy, which on
        a SpreadByPCPUs node is the node's (trimming each NUMA node's cpu amount)."""
        spread = run.node_bind == "SpreadByPCPUs"
        books = _books_under(run, CPUBindPolicy.SPREAD_BY_PCPUS if spread else "")
        self.spread[row] = spread
        self._trimmed_cpus(row, books, numa_ids)
        self.free_cpus[row], self.held_cpus[row] = books.free, books.held
        self.topology_valid[row] = run.ctx.view.topology.is_valid()

    def _trimmed_cpus(self, row: int, books: Books, numa_ids: tuple[int, ...]) -> None:
        """Each NUMA node's free cpus and cpu amount in `books` (trimmed to those cpus
        under a required bind policy)."""
        for position, numa in enumerate(numa_ids):
            self.numa_free[row, position] = books.numa_free.get(numa, 0)
            self.cpu_available[row, position] = books.totals.get(numa, {}).get("cpu", 0)

    def subset(self, rows: Ints) -> SingleNUMAColumns:
        """The columns of `rows` alone, in that order (copies: to read, not to build)."""
        part = object.__new__(SingleNUMAColumns)
        part.width, part.lock = self.width, self.lock
        part.sources = [self.sources[row] for row in rows.tolist()]
        for name in CPU_ARRAYS:
            setattr(part, name, getattr(self, name)[rows])
        for name in ("published", "capacity", "net_held", "node_allocatable", "node_requested"):
            setattr(part, name, {k: v[rows] for k, v in getattr(self, name).items()})
        return part

    def _node_columns(self, name: str) -> tuple[Ints, Ints]:
        if name not in self.node_allocatable:
            count = len(self.sources)
            self.node_allocatable[name] = np.zeros(count, np.int64)
            self.node_requested[name] = np.zeros(count, np.int64)
        return self.node_allocatable[name], self.node_requested[name]

    def node_amounts(self, name: str) -> tuple[Ints, Ints]:
        """(allocatable, requested) of `name` per row, node-wide."""
        if name in self.node_allocatable:
            return self.node_allocatable[name], self.node_requested[name]
        zeros = np.zeros(len(self.sources), np.int64)
        return zeros, zeros

    def _columns(self, name: str) -> tuple[Bools, Ints, Ints]:
        if name not in self.published:
            count = len(self.sources)
            self.published[name] = np.zeros(count, np.bool_)
            self.capacity[name] = np.zeros((count, self.width), np.int64)
            self.net_held[name] = np.zeros((count, self.width), np.int64)
        return self.published[name], self.capacity[name], self.net_held[name]

    def amounts(self, name: str) -> tuple[Bools, Ints, Ints]:
        """(published per row, R, D) of `name`; nothing anywhere for a name never seen."""
        if name in self.published:
            return self.published[name], self.capacity[name], self.net_held[name]
        count = len(self.sources)
        zeros = np.zeros((count, self.width), np.int64)
        return np.zeros(count, np.bool_), zeros, zeros


def _node_in_case(run: NodeRun, numa_ids: tuple[int, ...], width: int) -> bool:
    """The single-NUMA case's node (module docstring): SingleNUMANode, or Restricted on
    at least two NUMA nodes; no bind policy, or SpreadByPCPUs."""
    view = run.ctx.view
    return (
        run.node_bind in ("None", "SpreadByPCPUs")
        and _single_numa_merge(run, numa_ids)
        and 1 <= len(numa_ids) <= width
        and len(set(view.resource_names)) == 1
        and view.max_ref_count == 1
    )


def _single_numa_merge(run: NodeRun, numa_ids: tuple[int, ...]) -> bool:
    """Does a merge of single-NUMA hints decide the node (SingleNUMANode, or Restricted
    on at least two NUMA nodes), its ids ascending (the first hint wins a tie)?"""
    policy = node_numa_policy(run.node, run.ctx.view)
    restricted = policy == NUMATopologyPolicy.RESTRICTED and len(numa_ids) >= 2
    return (policy == NUMATopologyPolicy.SINGLE_NUMA_NODE or restricted) and all(
        a < b for a, b in zip(numa_ids, numa_ids[1:], strict=False)
    )


def pod_binds_whole_cores(state: PodState) -> bool:
    """The second case's pod: whole cpus, which a FullPCPUsOnly node binds; no bind
    policy of its own but FullPCPUs, no NUMA policy, no exclusive policy, no reservation
    affinity, not ignoring reservations."""
    cpu = state.requests.get("cpu", 0)
    return (
        state.error is None
        and not state.skip
        and state.num_cpus_needed > 0
        and cpu == state.num_cpus_needed * 1000
        and state.required_cpu_bind_policy in ("", CPUBindPolicy.FULL_PCPUS)
        and not state.pod_numa_policy
        and state.preferred_cpu_exclusive_policy in NO_EXCLUSIVE_POLICY
        and not state.has_reservation_affinity
        and not state.ignores_reservations
        and all(amount >= 0 for amount in state.requests.values())
    )


def _books_under(run: NodeRun, policy: str) -> Books:
    """The node's books under `policy` required ("": none), whatever the pod asks for
    (the books depend on the pod only through a required bind policy)."""
    opts = replace(
        resource_options(run, None), required_cpu_bind_policy=bool(policy), cpu_bind_policy=policy
    )
    return books_of(run, opts, layout_of(run))


def _full_pcpus_books(run: NodeRun) -> Books:
    """The node's books under required FullPCPUs (whole free cores; cpu amounts trimmed)."""
    return _books_under(run, CPUBindPolicy.FULL_PCPUS)


def _refused_by_sums(run: NodeRun, numa_ids: tuple[int, ...], width: int) -> bool:
    """The third case's node: FullPCPUsOnly under SingleNUMANode or Restricted, every
    NUMA node publishing the same resources, unique NUMA ids, a reference count of 1, a
    valid CPU topology with whole cores inside NUMA nodes (the counting Filter's)."""
    view = run.ctx.view
    policy = node_numa_policy(run.node, view)
    return (
        run.node_bind == "FullPCPUsOnly"
        and policy in (NUMATopologyPolicy.SINGLE_NUMA_NODE, NUMATopologyPolicy.RESTRICTED)
        and 1 <= len(numa_ids) <= width
        and len(set(numa_ids)) == len(numa_ids)
        and len(set(view.resource_names)) == 1
        and view.max_ref_count == 1
        and view.topology.is_valid()
        and layout_of(run).uniform
    )


def _binds_whole_cores(run: NodeRun, numa_ids: tuple[int, ...]) -> bool:
    """The second case's node: FullPCPUsOnly (label or kubelet), no NUMA policy, a valid
    CPU topology with every core whole inside one NUMA node (`CPULayout.uniform`), a
    reference count of 1, unique NUMA ids."""
    view = run.ctx.view
    return (
        run.node_bind == "FullPCPUsOnly"
        and node_numa_policy(run.node, view) == NUMATopologyPolicy.NONE
        and view.max_ref_count == 1
        and len(set(numa_ids)) == len(numa_ids)
        and view.topology.is_valid()
        and layout_of(run).uniform
    )


def pod_in_case(state: PodState) -> bool:
    """The pod's side of the case (module docstring); the node's side is per row.
    (A named reservation affinity is an affinity; PreFilter copies the ignored label.)"""
    if state.error is not None or state.skip:
        return False
    if state.request_cpu_bind and not binds_in_case(state):
        return False
    if state.pod_numa_policy not in ("", NUMATopologyPolicy.SINGLE_NUMA_NODE):
        return False
    exclusive = state.pod_numa_exclusive or ("Required" if state.pod_numa_policy else "")
    if exclusive == "Required" or state.has_reservation_affinity:
        return False
    if state.ignores_reservations:
        return False
    return all(amount >= 0 for amount in state.requests.values())


NO_EXCLUSIVE_POLICY = (CPUExclusivePolicy.UNSET, CPUExclusivePolicy.NONE)
GROUP_BITS = 62  # `_nothing_fits` groups rows by a bit per requested name


def binds_in_case(state: PodState) -> bool:
    """A pod binding cpus in the case: whole cpus under a preferred bind policy (a
    required one trims the books) and no exclusive policy."""
    cpu = state.requests.get("cpu", 0)
    return (
        not state.required_cpu_bind_policy
        and state.preferred_cpu_exclusive_policy in NO_EXCLUSIVE_POLICY
        and state.num_cpus_needed > 0
        and cpu == state.num_cpus_needed * 1000
    )


@dataclass(frozen=True, slots=True)
class ColumnVerdicts:
    """The rows decided here (`decided`), each fitting, with its Score and NUMA id, and
    the copies its NUMA nodes take alone (before the node-level filters' limit); and
    the rows no NUMA mask can take the pod (`nothing_fits`: a group number, -1 for
    none), which Filter refuses alike within a group (`_nothing_fits`)."""

    decided: Bools
    score: Ints
    numa: Ints
    copies: Ints
    nothing_fits: Ints
    counted: Bools  # the decided rows whose `copies` are known (the rest: the reference)


def quick_refusals(
    index: NRTIndex, pod: PodSpec, rows: Bools, config: KoordConfig
) -> tuple[Bools, PlacementResult] | None:
    """Rows of `rows` (the shared filters passed) Filter refuses before any book is read,
    and the verdict they share.

    A pod with no NUMA policy of its own and a fractional cpu request is refused by
    every node with a CPU bind policy (requestCPUBind: the bind policy asks for whole
    cpus), after the shared filters and before its NodeRun (`koordinator.node_run`).
    """
    state = cache.kept_prefilter(pod, config)
    if state.error is not None or state.skip or state.pod_numa_policy:
        return None
    binding = request_cpu_bind(state, "FullPCPUsOnly")  # what any bind policy answers
    if not isinstance(binding, Reason):
        return None
    verdict = replace(refused(binding), score=None)
    return rows & index.koordinator_binds, verdict


def columns_of(index: NRTIndex, config: KoordConfig) -> SingleNUMAColumns:
    """The index's columns, kept in its memo (one set per reference count)."""
    key = f"{MEMO_KEY}/{config.max_ref_count}"
    columns = index.memo.get(key)
    if not isinstance(columns, SingleNUMAColumns):
        columns = SingleNUMAColumns(len(index.nodes), index.width)
        index.memo[key] = columns
    return columns


def _built_rows(
    index: NRTIndex,
    columns: SingleNUMAColumns,
    rows: Bools,
    pod: PodSpec,
    state: PodState,
    config: KoordConfig,
    reservations_on: ReservationsOn,
) -> Bools:
    """Rows of `rows` whose columns serve this pod, building the ones not built yet."""
    chosen = np.zeros(len(index.nodes), np.bool_)
    for row in np.flatnonzero(rows).tolist():
        node = index.nodes[row]
        bound = reservations_on(node)
        if any(matches_owners(pod, r.owners) for r in bound):
            continue  # the split (and the books) would differ: the reference decides
        if not columns.current(row, node, bound):
            run = node_run(node, pod, state, bound, config, cache.KEPT)
            if not isinstance(run, NodeRun):
                continue
            columns.build(row, run, bound)
        chosen[row] = True
    return chosen


def _scores(
    shape: tuple[int, ...],
    requested: Mapping[str, Ints],
    allocatable: Mapping[str, Ints],
    pod_requests: Mapping[str, int],
    weights: Mapping[str, int],
    strategy: str,
) -> Ints:
    """`koordinator.reference.numa.resource_score` elementwise over arrays of `shape` (the amounts
    of each weighed resource; no weight scores 0 everywhere)."""
    total = np.zeros(shape, np.int64)
    weight_sum = np.zeros(shape, np.int64)
    for name, weight in weights.items():
        pod_request = pod_requests.get(name, 0)
        if (pod_request == 0 and is_scalar(name)) or not is_scored(name):
            continue
        capacity = allocatable[name]
        used = requested[name] + pod_request
        safe = np.where(capacity == 0, 1, capacity)
        if strategy == "MostAllocated":
            score = np.minimum(used, capacity) * MAX_NODE_SCORE // safe
        else:
            score = np.where(used > capacity, 0, (capacity - used) * MAX_NODE_SCORE // safe)
        counted = capacity != 0
        total += np.where(counted, score * weight, 0)
        weight_sum += np.where(counted, weight, 0)
    return np.where(weight_sum > 0, total // np.maximum(weight_sum, 1), 0)


def _left(capacity: Ints, net_held: Ints) -> Ints:
    """What `available_numa` leaves of R with D in use: max(R - max(D, 0), 0)."""
    return np.maximum(capacity - np.maximum(net_held, 0), 0)


def _available(columns: SingleNUMAColumns, name: str, capacity: Ints, net_held: Ints) -> Ints:
    """The books' available amounts of `name` per NUMA node: what `available_numa`
    leaves, with cpu trimmed to the usable cpus where a bind policy is required
    (SpreadByPCPUs rows, and the third case's FullPCPUsOnly rows)."""
    left = _left(capacity, net_held)
    if name != "cpu":
        return left
    trimmed = columns.spread | columns.sums_case
    return np.where(trimmed[:, None], columns.cpu_available, left)


def _numa_fits(
    columns: SingleNUMAColumns, requests: Mapping[str, int]
) -> tuple[Bools, Ints, Bools]:
    """Per (row, NUMA node): a hint (it has some of every requested published resource,
    and each requested amount); the copies it takes alone; and per row whether the pod
    requests something published there at all."""
    fits = columns.valid.copy()
    copies = np.full(fits.shape, np.iinfo(np.int64).max, np.int64)
    asks_published = np.zeros(len(columns.sources), np.bool_)
    for name, amount in requests.items():
        published, capacity, net_held = columns.amounts(name)
        available = _available(columns, name, capacity, net_held)
        lacking = published[:, None] & (available == 0)
        fits &= ~lacking
        if amount <= 0:
            continue
        asks_published |= published
        fits &= ~published[:, None] | (available >= amount)
        slack = capacity - amount - net_held
        alone = np.where((capacity >= amount) & (slack >= 0), slack // amount + 1, 0)
        copies = np.where(published[:, None], np.minimum(copies, alone), copies)
    copies = np.where(fits & asks_published[:, None], copies, 0)
    return fits, copies, asks_published


def judge(
    index: NRTIndex,
    pod: PodSpec,
    rows: Bools,
    config: KoordConfig,
    reservations_on: ReservationsOn,
) -> ColumnVerdicts | None:
    """Filter, Score and copies of every row of `rows` in the case; None when the pod
    is not (every row then goes to the reference).

    `rows` must have passed NodeUnschedulable and NodeResourcesFit. `copies` are what
    the NUMA nodes take; the caller caps them at what the node-level filters admit.
    """
    state = cache.kept_prefilter(pod, config)
    single, whole = pod_in_case(state), pod_binds_whole_cores(state)
    if not rows.any() or not (single or whole):
        return None
    # a SpreadByPCPUs node binds any whole-cpu pod: in the case only for one that binds
    # cpus itself (`needed` is then the same on every row)
    spread = single and state.request_cpu_bind
    binds, wanted = index.koordinator_binds, np.zeros_like(rows)
    if single:
        wanted |= rows & ~binds
    if whole or spread:
        wanted |= rows & binds
    columns = columns_of(index, config)
    with columns.lock:  # another what-if on this index may build rows for its reservations
        built = _built_rows(index, columns, wanted, pod, state, config, reservations_on)
        # a required bind policy's rows (SpreadByPCPUs, FullPCPUsOnly) bind any whole-cpu
        # pod: in the single-NUMA case only for one binding cpus itself, as `spread` says
        requires = columns.spread | columns.sums_case
        single_rows = columns.case & (~requires | spread) & single
        candidates = built & (single_rows | ((columns.whole_cores | columns.sums_case) & whole))
        if not candidates.any():
            return None
        needed = state.num_cpus_needed if state.request_cpu_bind else 0
        return _verdicts(columns, candidates, single_rows, state, config, needed)


def _verdicts(
    columns: SingleNUMAColumns,
    candidates: Bools,
    single_rows: Bools,
    state: PodState,
    config: KoordConfig,
    needed: int,
) -> ColumnVerdicts:
    """Filter, Score and copies of the candidate rows, worked out on those rows only (a
    few hundred of the index's thousands) and spread back over the index's rows; only
    `single_rows` are decided as the single-NUMA case."""
    rows = np.flatnonzero(candidates)
    part = columns.subset(rows)
    found = _candidate_verdicts(part, single_rows[rows], state, config, needed)
    if part.whole_cores.any():
        found = _with_whole_cores(part, found, state, config)
    count = len(candidates)
    decided = np.zeros(count, np.bool_)
    score, copies = np.zeros(count, np.int64), np.zeros(count, np.int64)
    numa, nothing = np.full(count, -1, np.int64), np.full(count, -1, np.int64)
    counted = np.zeros(count, np.bool_)
    decided[rows], score[rows], numa[rows] = found.decided, found.score, found.numa
    copies[rows], nothing[rows], counted[rows] = found.copies, found.nothing_fits, found.counted
    return ColumnVerdicts(decided, score, numa, copies, nothing, counted)


def _nothing_fits(columns: SingleNUMAColumns, state: PodState, needed: int) -> Ints:
    """Rows of the single-NUMA case and of the third case where no NUMA mask of any
    width can take the pod, by group (-1: not known to be such a row).

    Before trying any mask, the hint walk checks sums (`HintWalk._nothing_allocates`):
    when all NUMA nodes together hold less than some requested amount (of a published
    resource; the cpu amount trimmed to whole free cores under required FullPCPUs), or,
    for a pod binding cpus, fewer free cpus than it needs, every requested published
    name gets an empty hint list, and the merge refuses with "Unsatisfied NUMA <name>"
    for each, in name order (both SingleNUMANode and Restricted). Rows whose requested
    names are published alike share a group: one verdict. Filter's bind checks come
    first: the third case's rows need the cpus to be whole cores, a binding pod's
    single-NUMA rows a valid topology."""
    if len(state.requests) > GROUP_BITS:  # a bit per requested name would not fit
        return np.full(len(columns.sources), -1, np.int64)
    whole = state.num_cpus_needed
    short = np.zeros(len(columns.sources), np.bool_)
    group = np.zeros(len(columns.sources), np.int64)
    for position, name in enumerate(sorted(state.requests)):
        published, capacity, net_held = columns.amounts(name)
        group |= published.astype(np.int64) << position
        amount = state.requests[name]
        if amount <= 0:
            continue
        available = _available(columns, name, capacity, net_held)
        short |= published & (available.sum(axis=1) < amount)
    cpu_published, _, _ = columns.amounts("cpu")
    free = columns.numa_free.sum(axis=1)
    cpus = np.where(columns.sums_case, whole, needed)
    short |= cpu_published & (cpus > 0) & (free < cpus)
    checked = columns.case & ~columns.sums_case & ((needed == 0) | columns.topology_valid)
    checked |= columns.sums_case & _aligned(columns, whole)
    return np.where(short & checked, group, -1)


def _aligned(columns: SingleNUMAColumns, cpus: int) -> Bools:
    """Rows where `cpus` are whole cores (required FullPCPUs' bind check)."""
    return np.asarray(cpus % np.maximum(columns.per_core, 1) == 0, np.bool_)


def _candidate_verdicts(
    columns: SingleNUMAColumns,
    single_rows: Bools,
    state: PodState,
    config: KoordConfig,
    needed: int,
) -> ColumnVerdicts:
    """Filter, Score and copies of the single-NUMA case's rows of `columns` (those of
    `single_rows`), and the refusals `_nothing_fits` finds (see the module docstring);
    `needed`: the cpus a pod binding cpus takes (0: it binds none)."""
    requests = state.requests
    fits, copies, asks_published = _numa_fits(columns, requests)
    # one NUMA node: SingleNUMANode's merge turns the hint (every NUMA node) into "any"
    alone = (columns.valid.sum(axis=1) == 1) & ~columns.restricted
    if needed:
        fits, copies = _with_cpus(columns, fits, copies, needed)
    decided = single_rows & asks_published & fits.any(axis=1)
    # required FullPCPUs' bind check refuses cpus that are not whole cores
    decided &= ~columns.sums_case | _aligned(columns, needed)
    if needed:  # cpus taken "anywhere" on one NUMA node: left to the reference
        decided &= ~alone & columns.topology_valid
    chosen = _chosen_positions(columns, fits, requests, config)
    score = _chosen_scores(columns, chosen, requests, config, needed)
    numa = np.take_along_axis(columns.numa_ids, chosen[:, None], 1)[:, 0]
    score = np.where(alone, _node_scores(columns, requests, config), score)
    numa = np.where(alone, -1, numa)
    total = np.where(alone, UNCOUNTED, copies.sum(axis=1))
    if needed:
        total = np.minimum(total, columns.free_cpus // needed)
    nothing = _nothing_fits(columns, state, needed)
    counted = decided & ~columns.restricted & ~columns.spread
    numa = np.where(decided, numa, -1)
    return ColumnVerdicts(decided, score, numa, total, nothing, counted)


def _with_whole_cores(
    columns: SingleNUMAColumns, found: ColumnVerdicts, state: PodState, config: KoordConfig
) -> ColumnVerdicts:
    """`found`, with the rows of the second case (`whole_cores`) decided as Filter and
    Score decide them: the bind checks pass (a valid topology; n cpus a whole number of
    cores); with no NUMA policy the attempt has no hint, so it succeeds when the books
    (required FullPCPUs: whole free cores) hold n cpus anywhere; Score is the node-level
    scorer. Each copy takes n cpus as whole cores (a uniform layout), so the node takes
    free // n copies (`koordinator.fast.count`'s copies anywhere)."""
    needed, whole = state.num_cpus_needed, columns.whole_cores
    fits = whole & _aligned(columns, needed) & (columns.full_free >= needed)
    score = _node_scores(columns, state.requests, config)
    return ColumnVerdicts(
        np.where(whole, fits, found.decided),
        np.where(whole, score, found.score),
        np.where(whole, -1, found.numa),
        np.where(whole, columns.full_free // needed, found.copies),
        found.nothing_fits,
        np.where(whole, fits, found.counted),
    )


def _with_cpus(
    columns: SingleNUMAColumns, fits: Bools, copies: Ints, needed: int
) -> tuple[Bools, Ints]:
    """The hints and copies of a pod binding `needed` cpus under a preferred policy.

    allocateCPUSet takes min(free cpus there, cpu amount placed) from the hint's NUMA
    node, the whole cpu request, and must get `needed`; it refuses first when the
    node's free cpus fall short (`koordinator.fast.filter_score.cpu_reason`). Each copy then takes
    `needed` cpus off both counts (`koordinator.fast.count`'s alike copies)."""
    cpu_published, _, _ = columns.amounts("cpu")
    room = (columns.numa_free >= needed) & (columns.free_cpus >= needed)[:, None]
    fits = fits & room & cpu_published[:, None]
    return fits, np.where(fits, np.minimum(copies, columns.numa_free // needed), 0)


def _node_scores(
    columns: SingleNUMAColumns, requests: Mapping[str, int], config: KoordConfig
) -> Ints:
    """Score without a hint: the scorer over the node's allocatable and requested."""
    allocatable: dict[str, Ints] = {}
    requested: dict[str, Ints] = {}
    for name in config.resource_weights:
        allocatable[name], requested[name] = columns.node_amounts(name)
    weights, strategy = config.resource_weights, config.scoring_strategy
    return _scores(columns.case.shape, requested, allocatable, requests, weights, strategy)


def _chosen_amounts(
    columns: SingleNUMAColumns, config: KoordConfig, chosen: Ints
) -> tuple[dict[str, Ints], dict[str, Ints]]:
    """Per weighed resource, the chosen NUMA node's R and max(D, 0) (what Score reads:
    the allocated amounts, never trimmed)."""
    capacity: dict[str, Ints] = {}
    held: dict[str, Ints] = {}
    for name in config.resource_weights:
        _, amount, net_held = columns.amounts(name)
        amount = np.take_along_axis(amount, chosen[:, None], 1)[:, 0]
        net_held = np.take_along_axis(net_held, chosen[:, None], 1)[:, 0]
        capacity[name], held[name] = amount, np.maximum(net_held, 0)
    return capacity, held


def _chosen_scores(
    columns: SingleNUMAColumns,
    chosen: Ints,
    requests: Mapping[str, int],
    config: KoordConfig,
    needed: int,
) -> Ints:
    """Score on the chosen NUMA node: the scorer over its R and max(D, 0); with cpus
    bound, the cpu in use is every cpu the node's books hold (`score_inputs`)."""
    capacity, held = _chosen_amounts(columns, config, chosen)
    if needed and "cpu" in held:
        held["cpu"] = columns.held_cpus * 1000
    weights, strategy = config.resource_weights, config.scoring_strategy
    return _scores(chosen.shape, held, capacity, requests, weights, strategy)


def _chosen_positions(
    columns: SingleNUMAColumns, fits: Bools, requests: Mapping[str, int], config: KoordConfig
) -> Ints:
    """The merge of single-NUMA hints (SingleNUMANode's; Restricted's, the narrowest
    being preferred): the hint with the highest NUMA score, the first on a tie. A
    hint's score reads the NUMA node's R and the part of it not available (the books':
    min(max(D, 0), R), or less the trimmed cpus)."""
    published: dict[str, Ints] = {}
    requested: dict[str, Ints] = {}
    for name in config.resource_weights:
        _, capacity, net_held = columns.amounts(name)
        available = _available(columns, name, capacity, net_held)
        published[name], requested[name] = capacity, np.maximum(capacity - available, 0)
    weights, strategy = config.resource_weights, config.numa_scoring_strategy
    scores = _scores(fits.shape, requested, published, requests, weights, strategy)
    return np.asarray(np.argmax(np.where(fits, scores, -1), axis=1), np.int64)
