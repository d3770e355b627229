"""scheduler-plugins score_test.go / least_numa_test.go / nodeconfig tables, ported as data."""

from __future__ import annotations

import pytest

from scheduler_api.engine.model.snapshot import NodeSnapshot
from scheduler_api.engine.schedulerplugins.reference.common import NUMANode, ScoringStrategy
from tests.engine.data_nrt_builders import amounts, nrt_node, nrt_zone

CPU, MEM, GPU = "cpu", "memory", "gpu"


def default_numa_nodes(policy: str) -> dict[str, NodeSnapshot]:
    """defaultNUMANodes(withPolicy(policy)): three nodes with two identical zones each."""
    shapes = {"Node1": ("4", "500Mi"), "Node2": ("2", "50Mi"), "Node3": ("6", "60Mi")}
    return {
        name: nrt_node(
            name,
            [nrt_zone(i, {CPU: (cpu, cpu), MEM: (mem, mem)}) for i in (0, 1)],
            policies=[policy],
        )
        for name, (cpu, mem) in shapes.items()
    }


FOUR_NUMA_COSTS = {
    0: {0: 10, 1: 12, 2: 20, 3: 20},
    1: {0: 12, 1: 10, 2: 20, 3: 20},
    2: {0: 20, 1: 20, 2: 10, 3: 12},
    3: {0: 20, 1: 20, 2: 12, 3: 10},
}


def four_numa_nodes() -> dict[str, NodeSnapshot]:
    """fourNUMANodes(): GPUs on zones 0,1 of Node1 and on zones 0,2 of Node2."""
    gpus = {"Node1": ("1", "1", "0", "0"), "Node2": ("1", "0", "1", "0")}
    return {
        name: nrt_node(
            name,
            [
                nrt_zone(i, {CPU: ("2", "2"), MEM: ("50Mi", "50Mi"), GPU: (g, g)},
                         FOUR_NUMA_COSTS[i])
                for i, g in enumerate(per_zone)
            ],
            policies=["BestEffortContainerLevel"],
        )
        for name, per_zone in gpus.items()
    }  # fmt: skip


# TestNodeResourceScorePlugin + TestNodeResourcePartialDataScorePlugin. Upstream asserts
# the winner (Node2 70, Node3 100, Node1 73) and Node1's values (27/73/89); the other
# entries are the same formula written out.
STRATEGY_CASES = [
    pytest.param(ScoringStrategy.MOST_ALLOCATED, {"Node1": 27, "Node2": 70, "Node3": 33},
                 id="most-allocated-prefers-node2-70"),
    pytest.param(ScoringStrategy.BALANCED_ALLOCATION, {"Node1": 89, "Node2": 82, "Node3": 100},
                 id="balanced-allocation-prefers-node3-100"),
    pytest.param(ScoringStrategy.LEAST_ALLOCATED, {"Node1": 73, "Node2": 30, "Node3": 66},
                 id="least-allocated-prefers-node1-73"),
]  # fmt: skip

# TestNodeResourceScorePluginLeastNUMA: (containers' requests, node set, expected scores).
C2 = {CPU: "2", MEM: "50Mi"}
BEC, BEP = "BestEffortContainerLevel", "BestEffortPodLevel"
C13 = [{CPU: "1", MEM: "50Mi"}, {CPU: "3", MEM: "50Mi"}]
C53 = [{CPU: "5", MEM: "50Mi"}, {CPU: "3", MEM: "50Mi"}]
LEAST_NUMA_CASES = [
    pytest.param([C2], BEC, {"Node1": 94, "Node2": 94, "Node3": 94},
                 id="container-scope-one-container-case-1"),
    pytest.param([{CPU: "4", MEM: "50Mi"}], BEC, {"Node1": 94, "Node2": 82, "Node3": 94},
                 id="container-scope-one-container-case-2"),
    pytest.param([{CPU: "6", MEM: "50Mi"}], BEC, {"Node1": 82, "Node2": 0, "Node3": 94},
                 id="container-scope-one-container-case-3"),
    pytest.param([C2, C2], BEC, {"Node1": 94, "Node2": 94, "Node3": 94},
                 id="container-scope-two-containers-case-1"),
    pytest.param(C13, BEC, {"Node1": 94, "Node2": 82, "Node3": 94},
                 id="container-scope-two-containers-case-2"),
    pytest.param(C53, BEC, {"Node1": 82, "Node2": 0, "Node3": 94},
                 id="container-scope-two-containers-case-3"),
    pytest.param([{"non-numa-resource": "1"}, {"non-numa-resource": "2"}],
                 BEC, {"Node1": 100, "Node2": 100, "Node3": 100},
                 id="container-scope-non-numa-resource"),
    pytest.param([C2, C2], BEP, {"Node1": 94, "Node2": 82, "Node3": 82},
                 id="pod-scope-two-containers-case-1"),
    pytest.param(C13, BEP,
                 {"Node1": 94, "Node2": 82, "Node3": 82}, id="pod-scope-two-containers-case-2"),
    pytest.param(C53, BEP,
                 {"Node1": 82, "Node2": 0, "Node3": 82}, id="pod-scope-two-containers-case-3"),
    pytest.param([{"non-numa-resource": "1"}], BEP,
                 {"Node1": 100, "Node2": 100, "Node3": 100}, id="pod-scope-non-numa-resource"),
    pytest.param([{CPU: "2", MEM: "50Mi", GPU: "1"}], "four", {"Node1": 94, "Node2": 94},
                 id="container-scope-4-numa-1-gpu"),
    pytest.param([{CPU: "2", MEM: "50Mi", GPU: "2"}], "four", {"Node1": 82, "Node2": 76},
                 id="container-scope-4-numa-2-gpu"),
    pytest.param([{CPU: "2", MEM: "50Mi", GPU: "2"}, C2], "four", {"Node1": 82, "Node2": 76},
                 id="container-scope-4-numa-2-gpu-in-one-container"),
]  # fmt: skip


def numa(numa_id: int, resources: dict[str, str], costs: dict[int, int] | None = None) -> NUMANode:
    return NUMANode(numa_id, amounts(resources), dict(costs or {}))


R = {GPU: "1", CPU: "4", MEM: "5Gi"}
R_NO_GPU = {GPU: "0", CPU: "4", MEM: "5Gi"}
R_NO_MEM = {GPU: "1", CPU: "4"}
FOUR_COSTS = [{0: 10, 1: 12, 2: 20, 3: 20}, {0: 12, 1: 10, 2: 20, 3: 20},
              {0: 20, 1: 20, 2: 10, 3: 12}, {0: 20, 1: 20, 2: 10, 3: 12}]  # fmt: skip
EIGHT_COSTS = {
    0: {0: 10, 1: 20, 2: 40, 3: 30, 4: 20, 5: 30, 6: 50, 7: 40},
    3: {0: 30, 1: 40, 2: 20, 3: 10, 4: 30, 5: 20, 6: 40, 7: 50},
    5: {0: 30, 1: 20, 2: 50, 3: 20, 4: 50, 5: 10, 6: 50, 7: 40},
    7: {0: 40, 1: 50, 2: 30, 3: 50, 4: 20, 5: 40, 6: 30, 7: 10},
    1: {0: 20, 1: 10, 2: 30, 3: 40, 4: 50, 5: 20, 6: 40, 7: 50},
    6: {0: 50, 1: 40, 2: 20, 3: 40, 4: 30, 5: 50, 6: 10, 7: 30},
    2: {0: 40, 1: 30, 2: 10, 3: 20, 4: 40, 5: 50, 6: 20, 7: 30},
    4: {0: 20, 1: 50, 2: 40, 3: 30, 4: 10, 5: 50, 6: 30, 7: 20},
}
EIGHT_ORDER = (0, 3, 5, 7, 1, 6, 2, 4)
SPARSE_COSTS = {0: {0: 10, 2: 12, 4: 20, 6: 20}, 2: {0: 12, 2: 10, 4: 20, 6: 20},
                4: {0: 20, 2: 20, 4: 10, 6: 12}, 6: {0: 20, 2: 20, 4: 12, 6: 10}}  # fmt: skip

# TestNUMANodesRequired: (numa list, pod resources, expected ids or None, is min distance).
REQUIRED_CASES = [
    pytest.param([numa(0, {CPU: "8", MEM: "10Gi"})], {CPU: "2", MEM: "2Gi"}, (0,), True,
                 id="simple-fit-on-one-numa"),
    pytest.param([numa(0, {CPU: "8", MEM: "10Gi"}), numa(1, {CPU: "8", MEM: "10Gi"})],
                 {CPU: "12", MEM: "2Gi"}, (0, 1), True, id="simple-fit-on-two-numa"),
    pytest.param([numa(0, {CPU: "8", MEM: "10Gi"}), numa(1, {CPU: "8", MEM: "10Gi"})],
                 {CPU: "22", MEM: "2Gi"}, None, False, id="cannot-fit"),
    pytest.param([numa(i, R if i < 2 else R_NO_GPU, FOUR_COSTS[i]) for i in range(4)],
                 {CPU: "2", MEM: "2Gi", GPU: "2"}, (0, 1), True, id="4-numa-optimal-distance"),
    pytest.param([numa(i, R if i in (0, 2) else R_NO_GPU,
                       {**FOUR_COSTS[i], **({2: 12, 3: 10} if i == 3 else {})}) for i in range(4)],
                 {CPU: "2", MEM: "2Gi", GPU: "2"}, (0, 2), False, id="4-numa-non-optimal-distance"),
    pytest.param([numa(i, R, EIGHT_COSTS[i]) for i in EIGHT_ORDER],
                 {CPU: "3", MEM: "2Gi", GPU: "3"}, (0, 1, 5), True,
                 id="8-numa-optimal-distance-unsorted-ids"),
    pytest.param([numa(i, R_NO_MEM if i % 2 else R, EIGHT_COSTS[i]) for i in EIGHT_ORDER],
                 {CPU: "3", MEM: "2Gi", GPU: "3"}, (2, 4, 6), False,
                 id="8-numa-non-optimal-odd-zones-without-memory"),
    pytest.param([numa(i, R if i in (0, 2) else R_NO_GPU, SPARSE_COSTS[i]) for i in (0, 2, 4, 6)],
                 {CPU: "2", MEM: "2Gi", GPU: "2"}, (0, 2), True,
                 id="4-numa-optimal-distance-non-sequential-ids"),
    pytest.param([numa(i, R if i in (0, 6) else R_NO_GPU, SPARSE_COSTS[i]) for i in (0, 2, 4, 6)],
                 {CPU: "2", MEM: "2Gi", GPU: "2"}, (0, 6), False,
                 id="4-numa-non-optimal-distance-non-sequential-ids"),
    pytest.param([numa(i, R_NO_MEM if i in (2, 6) else R, SPARSE_COSTS[i]) for i in (0, 2, 4, 6)],
                 {CPU: "2", MEM: "2Gi", GPU: "2"}, (0, 4), False,
                 id="4-numa-non-optimal-zones-2-and-6-without-memory"),
]  # fmt: skip

NORMALIZE_CASES = [
    pytest.param(1, False, 88, id="1-numa-non-optimal-distance"),
    pytest.param(2, False, 76, id="2-numa-non-optimal-distance"),
    pytest.param(8, False, 4, id="8-numa-non-optimal-distance"),
    pytest.param(1, True, 94, id="1-numa-optimal-distance"),
    pytest.param(2, True, 82, id="2-numa-optimal-distance"),
    pytest.param(8, True, 10, id="8-numa-optimal-distance"),
]

MIN_DISTANCE_NODES = [numa(i, {}, FOUR_COSTS[i] if i < 3 else {0: 20, 1: 20, 2: 12, 3: 10})
                      for i in range(4)]  # fmt: skip
NO_COST_NODES = [numa(i, {}) for i in range(4)]
PAIRS = [(0, 1), (0, 2), (0, 3), (1, 2), (1, 3), (2, 3)]
MIN_DISTANCE_CASES = [
    pytest.param([(0,), (1,), (2,), (3,)], MIN_DISTANCE_NODES, 10.0, id="single-numa-combinations"),
    pytest.param(PAIRS, MIN_DISTANCE_NODES, 11.0, id="two-numa-combinations"),
    pytest.param([(0, 1, 2), (1, 2, 3), (0, 2, 3)], MIN_DISTANCE_NODES, 134 / 9,
                 id="three-numa-combinations"),
    pytest.param(PAIRS, NO_COST_NODES, 255.0, id="two-numa-combinations-no-costs"),
]  # fmt: skip

# pkg/util TestGetPodEffectiveRequest: (app containers, init containers, expected) as
# (milli cpu, memory bytes) pairs like makeResourceList(cpu, mem).
EFFECTIVE_REQUEST_CASES = [
    pytest.param([(1, 1)], [], (1, 1), id="1-container"),
    pytest.param([(1, 1), (2, 3)], [], (3, 4), id="2-containers"),
    pytest.param([(1, 1), (2, 3)], [(1, 1)], (3, 4), id="2-containers-1-init"),
    pytest.param([(1, 1), (2, 3)], [(10, 1)], (10, 4), id="init-with-large-cpu"),
    pytest.param([(1, 1), (2, 3)], [(10, 1), (1, 10)], (10, 10), id="inits-large-cpu-or-memory"),
    pytest.param([(1, 1), (2, 3)], [(10, 1), (1, 1)], (10, 4), id="inits-only-large-cpu"),
]

# nodeconfig TestConfigFromPolicies / TestConfigFromAttributes / TestConfigFromNRT:
# (topologyPolicies, attributes, expected policy, expected scope).
TM_CONFIG_CASES = [
    pytest.param([], {}, "none", "container", id="defaults"),
    pytest.param(["SingleNUMANodePodLevel"], {}, "single-numa-node", "pod", id="single-numa-pod"),
    pytest.param(["SingleNUMANodeContainerLevel"], {}, "single-numa-node", "container",
                 id="single-numa-container"),
    pytest.param(["RestrictedContainerLevel"], {}, "restricted", "container",
                 id="restricted-container"),
    pytest.param(["RestrictedContainerLevel", "SingleNUMANodePodLevel"], {}, "restricted",
                 "container", id="only-first-policy-is-read"),
    pytest.param(["foobar"], {}, "none", "container", id="unknown-policy-ignored"),
    pytest.param(["SingleNUMANode"], {}, "none", "container",
                 id="koordinator-style-name-not-mapped"),
    pytest.param(["Restricted"], {}, "none", "container", id="bare-restricted-not-mapped"),
    pytest.param([], {"topologyManagerScope": "pod"}, "none", "pod", id="attributes-no-policy"),
    pytest.param([], {"topologyManagerPolicy": "restricted"}, "restricted", "container",
                 id="attributes-no-scope"),
    pytest.param([], {"topologyManagerScope": "Pod", "topologyManagerPolicy": "single-numa-node"},
                 "single-numa-node", "container", id="attributes-bad-scope-case"),
    pytest.param([], {"topologyManagerScope": "Container", "topologyManagerPolicy": "restricted"},
                 "restricted", "container", id="attributes-bad-scope-case-2"),
    pytest.param(["BestEffortPodLevel"], {"topologyManagerScope": "container"}, "best-effort",
                 "container", id="attributes-override-policies-partial"),
    pytest.param(["BestEffortPodLevel"],
                 {"topologyManagerScope": "container", "topologyManagerPolicy": "restricted"},
                 "restricted", "container", id="attributes-override-policies-full"),
    pytest.param([], {"topologyManagerPolicy": "SingleNUMANode"}, "none", "container",
                 id="attributes-policy-must-be-kubelet-spelling"),
]  # fmt: skip

MAX_NUMA_CASES = [
    pytest.param({}, 8, id="default-8"),
    pytest.param({"topologyManagerMaxNUMANodes": "16"}, 16, id="attribute-16"),
    pytest.param({"topologyManagerMaxNUMANodes": "1"}, 8, id="one-is-invalid"),
    pytest.param({"topologyManagerMaxNUMANodes": "abc"}, 8, id="non-number-ignored"),
    pytest.param({"topologyManagerMaxNUMANodes": "4096"}, 1024, id="clamped-to-1024"),
    pytest.param({"topologyManagerMaxNUMANodes": "+16"}, 16, id="plus-sign-as-go-atoi"),
    pytest.param({"topologyManagerMaxNUMANodes": "--4"}, 8, id="double-sign-ignored"),
    pytest.param({"topologyManagerMaxNUMANodes": "+-16"}, 8, id="mixed-signs-ignored"),
    pytest.param({"topologyManagerMaxNUMANodes": "\u00b2"}, 8, id="non-ascii-digit-ignored"),
    pytest.param({"topologyManagerMaxNUMANodes": " 16"}, 8, id="space-ignored"),
    pytest.param({"topologyManagerMaxNUMANodes": "9" * 20}, 8, id="beyond-int64-ignored"),
]
