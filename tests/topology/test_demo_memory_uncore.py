"""The demo's kubelet-feature nodes, as the engine sees them through a dump: a node whose
kubelet runs the Static Memory Manager over hugepages pools, and an AMD node whose CPUs'
uncore caches the DRA CPU driver publishes to a static CPU manager aligning by them.

Plain pytest, no database: `generate_demo_objects` -> `snapshot_from_objects` -> engine.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import replace
from typing import Any

import pytest

from scheduler_api.engine import (
    ClusterSnapshot,
    ContainerSpec,
    Flavour,
    NodeSnapshot,
    PodSpec,
    evaluate,
    kubelet_rules,
)
from tests.demo_checks.invariants import check_demo_invariants
from topology.adapters import snapshot_from_objects
from topology.demo import generate_demo_objects

GIB = 1 << 30
HUGEPAGES_1G = "hugepages-1Gi"
Objects = list[dict[str, Any]]


@pytest.fixture(scope="module")
def objects() -> Objects:
    return generate_demo_objects()


@pytest.fixture(scope="module")
def snapshot(objects: Objects) -> ClusterSnapshot:
    return snapshot_from_objects(objects)


def memory_manager_nodes(snapshot: ClusterSnapshot) -> list[NodeSnapshot]:
    return [n for n in snapshot.nodes if n.nrt_attributes.get("memoryManagerPolicy") == "Static"]


def uncore_nodes(snapshot: ClusterSnapshot) -> list[NodeSnapshot]:
    return [n for n in snapshot.nodes if n.uncore_caches]


def guaranteed(cpu_millis: int, memory: int, **extra: int) -> PodSpec:
    amounts = {"cpu": cpu_millis, "memory": memory, **extra}
    return PodSpec("team-net", "what-if", containers=(ContainerSpec("app", amounts, amounts),))


def free_hugepages(node: NodeSnapshot) -> dict[int, int]:
    return {zone.numa_id: zone.resources[HUGEPAGES_1G].available for zone in node.zones}


# --- the Memory Manager node ----------------------------------------------------------


@pytest.mark.parametrize(
    ("nodes", "name"), [(40, "gpu-04"), (17, "intel-2s-05"), (4, "intel-2s-01")]
)
def test_one_scheduler_plugins_node_runs_the_static_memory_manager(nodes: int, name: str) -> None:
    snapshot = snapshot_from_objects(generate_demo_objects(nodes=nodes, seed=nodes))
    (node,) = memory_manager_nodes(snapshot)
    assert node.name == name and node.flavour == Flavour.UPSTREAM_V1ALPHA2
    assert node.nrt_attributes["topologyManagerPolicy"] == "single-numa-node"
    assert kubelet_rules(node)[2].startswith("memory-manager Static (NRT attribute")


def test_its_zones_publish_hugepages_pools_and_the_memory_they_take(
    snapshot: ClusterSnapshot, objects: Objects
) -> None:
    (node,) = memory_manager_nodes(snapshot)
    numa = [zone for zone in node.zones if zone.zone_type == "Node"]
    assert len(numa) == 4
    for zone in numa:
        memory, pool = zone.resources["memory"], zone.resources[HUGEPAGES_1G]
        assert pool.capacity == pool.allocatable > 0
        # MemTotal is the capacity; reservedMemory and the pools come off allocatable
        assert memory.capacity >= memory.allocatable + pool.capacity
        assert "hugepages-2Mi" in zone.resources
    for name in (HUGEPAGES_1G, "hugepages-2Mi"):
        assert node.allocatable[name] == sum(zone.resources[name].allocatable for zone in numa)
    assert node.requested[HUGEPAGES_1G] + node.requested["hugepages-2Mi"] > 0
    held = sum(
        z.resources[HUGEPAGES_1G].allocatable - z.resources[HUGEPAGES_1G].available for z in numa
    )
    assert held == node.requested[HUGEPAGES_1G]
    assert check_demo_invariants(objects) == []


def test_hugepages_pods_are_guaranteed_and_sit_on_one_numa_zone(objects: Objects) -> None:
    pods = [
        pod
        for pod in objects
        if pod["kind"] == "Pod"
        and any(
            name.startswith("hugepages-")
            for container in pod["spec"]["containers"]
            for name in container["resources"].get("requests", {})
        )
    ]
    assert {pod["spec"]["nodeName"] for pod in pods} == {"gpu-04"}
    assert Counter(pod["status"]["qosClass"] for pod in pods) == {"Guaranteed": len(pods)}
    assert len(pods) >= 2


def test_hugepages_beyond_any_zone_are_refused_by_the_kubelet_not_by_kube_scheduler(
    snapshot: ClusterSnapshot,
) -> None:
    (node,) = memory_manager_nodes(snapshot)
    free = free_hugepages(node)
    ask = max(free.values()) + GIB
    assert ask <= sum(free.values())  # the node as a whole has them
    pod = guaranteed(100, GIB, **{HUGEPAGES_1G: ask})  # no whole CPU: memory decides
    default = evaluate(snapshot, pod, scheduler="default").verdict(node.name)
    assert default.scheduler_fits and not default.fits
    assert default.admission is not None and not default.admission.admitted
    assert "Memory Manager" in default.admission.reason
    # scheduler-plugins reads the zones and does not bind it at all
    judged = evaluate(snapshot, pod, scheduler="scheduler-plugins").verdict(node.name)
    assert not judged.scheduler_fits and not judged.fits


def test_hugepages_that_fit_one_zone_get_their_memory_on_that_numa_node(
    snapshot: ClusterSnapshot,
) -> None:
    (node,) = memory_manager_nodes(snapshot)
    free = free_hugepages(node)
    ask = min(value for value in free.values() if value >= 2 * GIB)
    verdict = evaluate(snapshot, guaranteed(100, GIB, **{HUGEPAGES_1G: ask})).verdict(node.name)
    assert verdict.fits and verdict.admission is not None
    (numa,) = verdict.admission.memory_numa or ()
    assert free[numa] >= ask
    assert "Static Memory Manager" in verdict.admission.reason


def test_a_pod_with_whole_cpus_is_not_checked_there_without_a_cpu_table(
    snapshot: ClusterSnapshot,
) -> None:
    """An NFD node publishes no CPU table (a koordlet annotation would make it a
    Koordinator node): the CPU manager's hints are unknown, and the answer says so."""
    (node,) = memory_manager_nodes(snapshot)
    verdict = evaluate(snapshot, guaranteed(1000, GIB, **{HUGEPAGES_1G: GIB})).verdict(node.name)
    assert verdict.admission is not None and not verdict.admission.checked
    assert "CPU layout" in verdict.admission.reason
    assert kubelet_rules(node)[0] == "cpu-manager: policy not published"


# --- the uncore-cache node ------------------------------------------------------------


def test_the_amd_node_publishes_three_uncore_caches_per_numa_zone(
    snapshot: ClusterSnapshot,
) -> None:
    (node,) = uncore_nodes(snapshot)
    assert node.name == "epyc-nps4-04" and node.flavour == Flavour.KOORDINATOR
    assert set(node.uncore_caches) == {row[0] for row in node.cpus}
    caches_per_numa = Counter()
    for numa in {row[3] for row in node.cpus}:
        caches = {node.uncore_caches[row[0]] for row in node.cpus if row[3] == numa}
        caches_per_numa[len(caches)] += 1
    assert caches_per_numa == {3: 8}
    rule = kubelet_rules(node)[0]
    assert rule.startswith("cpu-manager static: full-pcpus-only, prefer-align-cpus-by-uncorecache")
    assert "(24 uncore caches" in rule


def test_its_cpus_come_as_three_dra_cpu_slices_of_one_pool(objects: Objects) -> None:
    slices = [
        obj
        for obj in objects
        if obj["kind"] == "ResourceSlice" and obj["spec"]["driver"] == "dra.cpu"
    ]
    assert [len(s["spec"]["devices"]) for s in slices] == [128, 128, 128]
    assert {s["spec"]["pool"]["resourceSliceCount"] for s in slices} == {3}
    devices = [device for s in slices for device in s["spec"]["devices"]]
    assert [d["name"] for d in devices[:4]] == ["cpudev000", "cpudev001", "cpudev002", "cpudev003"]
    # core by core: a CPU, then its sibling
    first = [d["attributes"]["dra.cpu/cpuID"]["int"] for d in devices[:4]]
    assert first == [0, 192, 1, 193]
    node = next(
        o for o in objects if o["kind"] == "Node" and o["metadata"]["name"] == "epyc-nps4-04"
    )
    assert node["status"]["nodeInfo"]["kubeletVersion"].startswith("v1.34")


def pinned(node: NodeSnapshot, cpus: int, taken_at: Any) -> frozenset[int]:
    one_node = ClusterSnapshot((node,), (), taken_at)
    pod = guaranteed(cpus * 1000, 8 * GIB)
    verdict = evaluate(one_node, pod, scheduler="scheduler-plugins").verdict(node.name)
    assert verdict.fits and verdict.admission is not None
    assert verdict.admission.cpuset is not None and len(verdict.admission.cpuset) == cpus
    return verdict.admission.cpuset


@pytest.mark.parametrize("cpus", [8, 16])
def test_a_what_if_cpuset_lands_inside_one_uncore_cache(
    snapshot: ClusterSnapshot, cpus: int
) -> None:
    (node,) = uncore_nodes(snapshot)
    cpuset = pinned(node, cpus, snapshot.taken_at)
    assert len({node.uncore_caches[cpu] for cpu in cpuset}) == 1


def test_without_the_option_the_kubelet_packs_across_uncore_caches(
    snapshot: ClusterSnapshot,
) -> None:
    """NUMA 0's first CCD has its first two cores reserved: sixteen CPUs packed from the
    lowest free cores straddle two caches; the option takes the next whole CCD."""
    (node,) = uncore_nodes(snapshot)
    without = replace(node, cpu_manager_options={"full-pcpus-only": "true"})
    cpuset = pinned(without, 16, snapshot.taken_at)
    assert len({node.uncore_caches[cpu] for cpu in cpuset}) == 2


def test_small_fleets_have_no_uncore_cache_node() -> None:
    objects = generate_demo_objects(nodes=10, seed=1)
    assert not uncore_nodes(snapshot_from_objects(objects))
    assert not [
        o for o in objects if o["kind"] == "ResourceSlice" and o["spec"]["driver"] == "dra.cpu"
    ]
