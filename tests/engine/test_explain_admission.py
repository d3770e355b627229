"""The kubelet's refusal replayed provider by provider (issue 30 §2): the CPU manager's
hints over the node's CPU table, the memory and device hints over the NRT zones, and
which provider has no hint the policy accepts."""

from __future__ import annotations

from dataclasses import replace

from scheduler_api.engine import explain_admission
from scheduler_api.engine.model.snapshot import (
    ContainerSpec,
    NodeSnapshot,
    PodSpec,
    ResourceAmounts,
    TopologyManagerPolicy,
    TopologyManagerScope,
    Zone,
)

GI = 2**30
TWO_ZONES = tuple((cpu, cpu, cpu // 4, cpu // 4) for cpu in range(8))  # 4 CPUs per zone


def node(
    policy: TopologyManagerPolicy, *, gpus: tuple[int, int] = (0, 0), free_gi: int = 6
) -> NodeSnapshot:
    def zone(numa: int) -> Zone:
        resources = {
            "cpu": ResourceAmounts(4000, 4000, 4000),
            "memory": ResourceAmounts(8 * GI, 8 * GI, free_gi * GI),
        }
        if any(gpus):
            resources["nvidia.com/gpu"] = ResourceAmounts(1, 1, gpus[numa])
        return Zone(numa, f"node-{numa}", resources)

    return NodeSnapshot(
        "n",
        zones=(zone(0), zone(1)),
        cpus=TWO_ZONES,
        cpu_manager_policy="static",
        tm_policy=policy,
        tm_scope=TopologyManagerScope.POD,
    )


def pod(cpus: int, memory_gi: int = 1, gpus: int = 0) -> PodSpec:
    amounts = {"cpu": cpus * 1000, "memory": memory_gi * GI}
    if gpus:
        amounts["nvidia.com/gpu"] = gpus
    container = ContainerSpec("app", requests=amounts, limits=amounts)
    return PodSpec("ns", "p", uid="u", containers=(container,))


def providers(explained) -> dict[str, tuple[bool, list]]:  # type: ignore[no-untyped-def]
    return {
        p.resource: (p.accepted, [(sorted(h.numa or ()), h.preferred) for h in p.hints])
        for p in explained.providers
    }


def test_more_cpus_than_a_zone_holds_is_the_cpu_providers_refusal() -> None:
    explained = explain_admission(node(TopologyManagerPolicy.SINGLE_NUMA_NODE), pod(6))
    assert not explained.admitted and explained.blocking == ("cpu",)
    found = providers(explained)
    assert found["cpu"] == (False, [([0, 1], True)])
    assert found["memory"][0] is True


def test_memory_wider_than_a_zone_is_the_memory_providers_refusal() -> None:
    # no memory assigned yet (available == allocatable): both zones together are the
    # Memory Manager's only hint, which single-numa-node does not accept
    free = node(TopologyManagerPolicy.SINGLE_NUMA_NODE, free_gi=8)
    explained = explain_admission(free, pod(2, 10))
    assert not explained.admitted and explained.blocking == ("memory",)
    assert providers(explained)["memory"] == (False, [([0, 1], True)])
    assert any("Static Memory Manager" in note for note in explained.notes)


def test_zones_holding_single_numa_memory_give_no_multi_numa_hint() -> None:
    # memory already assigned on both zones (available < allocatable): the Static
    # policy offers no hint spanning them, so it has no preference for the Topology
    # Manager and refuses the pod only when it allocates
    explained = explain_admission(node(TopologyManagerPolicy.SINGLE_NUMA_NODE), pod(2, 7))
    assert explained.admitted and "memory" not in providers(explained)
    assert any("refuses the pod when it allocates" in note for note in explained.notes)
    assert any("multi-NUMA groups" in note for note in explained.notes)


def test_a_node_running_the_none_memory_policy_gives_no_memory_hints() -> None:
    none = replace(
        node(TopologyManagerPolicy.SINGLE_NUMA_NODE, free_gi=8),
        nrt_attributes={"memoryManagerPolicy": "None"},
    )
    explained = explain_admission(none, pod(2, 10))
    assert explained.admitted and "memory" not in providers(explained)


def test_cpus_and_a_device_on_different_zones_refuse_together_not_alone() -> None:
    # the GPU is free on zone 1 only; the CPUs fit either zone: each provider alone is
    # accepted, the merge is, too (zone 1 holds both)
    ok = explain_admission(node(TopologyManagerPolicy.SINGLE_NUMA_NODE, gpus=(0, 1)), pod(3, 1, 1))
    assert ok.admitted and ok.blocking == ()
    assert ok.merged is not None and ok.merged.numa == frozenset({1})


def test_providers_that_each_pass_but_disagree_are_said_to_disagree() -> None:
    # restricted: the CPUs prefer both zones, the memory prefers one: the merged {0,1} is
    # not preferred by memory, so the kubelet refuses, though neither provider alone does
    explained = explain_admission(node(TopologyManagerPolicy.RESTRICTED), pod(6))
    assert not explained.admitted and explained.blocking == ()
    assert any("they disagree" in note for note in explained.notes)


def test_the_restricted_policy_accepts_a_wider_hint_all_prefer() -> None:
    explained = explain_admission(node(TopologyManagerPolicy.RESTRICTED), pod(6, 10))
    assert explained.admitted


def test_the_none_policy_admits_whatever_the_hints() -> None:
    explained = explain_admission(node(TopologyManagerPolicy.NONE), pod(6))
    assert explained.admitted
