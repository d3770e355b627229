"""Koordinator capacity in picking mode: SpreadByPCPUs required on many NUMA nodes.

Copies of an LSR pod under Restricted or BestEffort, on nodes with several NUMA zones,
some of which may hold no cpus (memory-only zones, or cpus the NRT places elsewhere):
the hint walk leaves out the masks `generateHints` would turn down anyway (a NUMA node
lacking a requested resource), which must change no count. The count is held to the
copy-by-copy reference (every mask really allocated, the node rebuilt after each copy).
KOORD_EXAMPLES=1000 for a deeper local run.
"""

from __future__ import annotations

import json
import os
from itertools import combinations

import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from scheduler_api.engine.koordinator.fast import filter_score as koordinator_fast
from scheduler_api.engine.koordinator.fast.count import fill_count, needs_picking
from scheduler_api.engine.koordinator.fast.spread import Mask, masks_by_width
from scheduler_api.engine.koordinator.reference import plugin as koordinator
from scheduler_api.engine.koordinator.reference.plugin import (
    NodeRun,
    node_run,
    prefilter,
    resource_options,
)
from scheduler_api.engine.koordinator.reference.state import KoordConfig
from scheduler_api.engine.model.kubernetes import pod_request
from scheduler_api.engine.model.snapshot import (
    ANN_KOORD_NUMA_SPEC,
    ANN_KOORD_RESOURCE_SPEC,
    LABEL_CPU_BIND_POLICY,
    LABEL_KOORD_QOS,
    LABEL_NUMA_TOPOLOGY_POLICY,
    AllocationSource,
    ClusterSnapshot,
    CPUExclusivePolicy,
    Flavour,
    NodeSnapshot,
    PodAllocation,
    PodSpec,
    ResourceAmounts,
    Zone,
)
from scheduler_api.engine.whatif.evaluate import evaluate
from scheduler_api.engine.whatif.systems import SystemConfigs
from tests.engine.data_nrt_builders import container, pod

GI = 2**30
SETTINGS = settings(
    max_examples=int(os.environ.get("KOORD_EXAMPLES", "150")),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
Rows = list[tuple[int, int, int, int]]


@st.composite
def spread_layouts(draw: st.DrawFn) -> tuple[Rows, list[int]]:
    """SMT rows on the first NUMA nodes; the NUMA ids of every zone (some cpu-less)."""
    with_cpus = draw(st.integers(1, 5))
    cpu_less = draw(st.integers(0, 4)) if with_cpus > 1 else draw(st.integers(1, 4))
    cores = draw(st.integers(2, 5))
    sockets = draw(st.sampled_from([1, 2])) if with_cpus % 2 == 0 else 1
    per_socket = with_cpus // sockets
    total_cores = with_cpus * cores
    rows = []
    for core in range(total_cores):
        numa = core // cores
        for thread in range(2):
            rows.append((core + thread * total_cores, core, numa // per_socket, numa))
    return sorted(rows), list(range(with_cpus + cpu_less))


@st.composite
def spread_zones(draw: st.DrawFn, rows: Rows, numas: list[int]) -> tuple[Zone, ...]:
    """Zones publishing cpu and memory; cpu-less ones publish some cpu, or none."""
    result = []
    for numa in numas:
        cpus = sum(1 for row in rows if row[3] == numa) * 1000
        published = cpus or draw(st.sampled_from([0, 4000]))
        resources: dict[str, ResourceAmounts] = {}
        if published or draw(st.booleans()):
            resources["cpu"] = ResourceAmounts(published, published, 0)
        memory = draw(st.integers(0, 8)) * GI
        resources["memory"] = ResourceAmounts(memory, memory, memory)
        result.append(Zone(numa, f"node-{numa}", resources))
    return tuple(result)


@st.composite
def held_spread_pods(draw: st.DrawFn, rows: Rows, numas: list[int]) -> tuple[PodAllocation, ...]:
    cpus = [row[0] for row in rows]
    held = []
    for index in range(draw(st.integers(0, 3))):
        cpuset = frozenset(draw(st.sets(st.sampled_from(cpus), max_size=4)))
        used = draw(st.sets(st.sampled_from(numas), min_size=1, max_size=2))
        amounts = {numa: {"cpu": 1000, "memory": GI} for numa in used}
        held.append(PodAllocation(
            "ns", f"held-{index}", f"uid-held-{index}", AllocationSource.KOORDINATOR,
            cpuset=cpuset, numa_resources=amounts if draw(st.booleans()) else {},
            cpu_exclusive_policy=CPUExclusivePolicy.NONE,
        ))  # fmt: skip
    return tuple(held)


@st.composite
def spread_nodes(draw: st.DrawFn) -> NodeSnapshot:
    rows, numas = draw(spread_layouts())
    policy = draw(st.sampled_from(["Restricted", "Restricted", "BestEffort"]))
    labels = {LABEL_NUMA_TOPOLOGY_POLICY: policy}
    if draw(st.booleans()):
        labels[LABEL_CPU_BIND_POLICY] = "SpreadByPCPUs"
    return NodeSnapshot(
        name="k1",
        flavour=Flavour.KOORDINATOR,
        labels=labels,
        allocatable={"cpu": len(rows) * 1000, "memory": 64 * GI, "pods": 30},
        requested={"cpu": 0, "pods": 0},
        topology_policies=(policy,),
        zones=draw(spread_zones(rows, numas)),
        cpus=tuple(rows),
        allocations=draw(held_spread_pods(rows, numas)),
    )


@st.composite
def lsr_pods(draw: st.DrawFn) -> PodSpec:
    """Guaranteed LSR pods requiring SpreadByPCPUs, at times NUMA-exclusive."""
    resources = {
        "cpu": draw(st.sampled_from(["1", "2", "3", "4", "6"])),
        "memory": draw(st.sampled_from(["512Mi", "1Gi", "3Gi"])),
    }
    annotations = {ANN_KOORD_RESOURCE_SPEC: json.dumps({"requiredCPUBindPolicy": "SpreadByPCPUs"})}
    if draw(st.booleans()):
        exclusive = draw(st.sampled_from(["Required", "Preferred"]))
        annotations[ANN_KOORD_NUMA_SPEC] = json.dumps({"singleNUMANodeExclusive": exclusive})
    return pod(container("c", resources), name="p", labels={LABEL_KOORD_QOS: "LSR"},
               annotations=annotations, priority=9000)  # fmt: skip


def _picking(node: NodeSnapshot, spec: PodSpec, config: KoordConfig) -> bool:
    state = prefilter(spec, config)
    if state.error or state.skip:
        return False
    run = node_run(node, spec, state, (), config)
    return isinstance(run, NodeRun) and needs_picking(run, resource_options(run, None))


@SETTINGS
@given(spread_nodes(), lsr_pods())
def test_spread_copies_on_many_numa_nodes_count_as_the_reference_fills(
    node: NodeSnapshot, spec: PodSpec
) -> None:
    config = KoordConfig()
    judgement = evaluate(ClusterSnapshot((node,)), spec, scheduler="koordinator")._judgement
    judgement.configs = SystemConfigs(koordinator=config)
    reference = judgement.fill_copy_by_copy(0, 30, fast=False)
    counted = fill_count(node, spec, config, (), pod_request(spec), 30)
    cpu_less = sum(1 for zone in node.zones if not any(row[3] == zone.numa_id for row in node.cpus))
    event(f"picking: {_picking(node, spec, config)}; counted: {counted is not None}")
    event(f"cpu-less NUMA nodes: {min(cpu_less, 2)}; copies: {min(reference, 3)}")
    assert counted is None or counted == reference
    assert judgement.fill_node(0, 30) == (reference, node.name)


@SETTINGS
@given(spread_nodes(), lsr_pods())
def test_the_counting_filter_equals_the_reference_on_spread_nodes(
    node: NodeSnapshot, spec: PodSpec
) -> None:
    want = koordinator.evaluate(node, spec)
    assert koordinator_fast.evaluate(node, spec) == want


def test_masks_without_barred_numa_nodes_keep_their_order_and_parents() -> None:
    numa_ids = (0, 1, 2, 3, 4, 5)
    for size in range(len(numa_ids) + 1):
        for barred in map(frozenset, combinations(numa_ids, size)):
            widths = masks_by_width(numa_ids, barred)
            everything = masks_by_width(numa_ids)
            assert len(widths) == len(numa_ids)
            for width, full in zip(widths, everything, strict=True):
                kept = [m for m in full.masks if barred.isdisjoint(m.numas)]
                assert list(width.masks) == kept
            for previous, width in zip(widths, widths[1:], strict=False):
                for mask, parent in zip(width.masks, width.parents, strict=True):
                    assert previous.masks[parent].positions == mask.positions[:-1]


def _same(amount: int) -> ResourceAmounts:
    return ResourceAmounts(amount, amount, amount)


def test_a_walk_tries_no_mask_holding_a_numa_node_without_cpus(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Four NUMA nodes with cpus and four memory-only ones: only the 15 masks of the
    former can become hints, so only those are distributed."""
    rows = sorted((core + t * 16, core, 0, core // 4) for core in range(16) for t in range(2))
    zones = tuple(
        Zone(n, f"node-{n}", {"cpu": _same(8000 if n < 4 else 0), "memory": _same(16 * GI)})
        for n in range(8)
    )
    node = NodeSnapshot(
        name="k1", flavour=Flavour.KOORDINATOR, labels={LABEL_CPU_BIND_POLICY: "SpreadByPCPUs"},
        allocatable={"cpu": 32000, "memory": 128 * GI, "pods": 30},
        topology_policies=("Restricted",), zones=zones, cpus=tuple(rows),
    )  # fmt: skip
    spec = pod(container("c", {"cpu": "6", "memory": "1Gi"}), name="p",
               labels={LABEL_KOORD_QOS: "LSR"}, priority=9000)  # fmt: skip
    tried: list[frozenset[int]] = []
    allocates = koordinator_fast.HintWalk._allocates

    def spy(walk: koordinator_fast.HintWalk, mask: Mask) -> bool:
        tried.append(mask.numas)
        return allocates(walk, mask)

    monkeypatch.setattr(koordinator_fast.HintWalk, "_allocates", spy)
    assert koordinator_fast.evaluate(node, spec) == koordinator.evaluate(node, spec)
    assert tried and all(numas <= {0, 1, 2, 3} for numas in tried)
    judgement = evaluate(ClusterSnapshot((node,)), spec, scheduler="koordinator")._judgement
    reference = judgement.fill_copy_by_copy(0, 30, fast=False)
    assert fill_count(node, spec, KoordConfig(), (), pod_request(spec), 30) == reference
