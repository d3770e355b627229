"""A Koordinator node's count is kept with its books: the same question is counted once.

The answer cache keeps answers per mirror version, so a question asked again after the
mirror changed elsewhere runs the engine again; the counts of the nodes that did not
change come from their books' memo. Anything the count reads (the pod, the config, the
cap, the node itself) is part of what the memo is kept under.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator

import pytest

from scheduler_api.engine.koordinator import cache
from scheduler_api.engine.koordinator.cache import MEMO_KEPT, kept_books
from scheduler_api.engine.koordinator.fast import count as koordinator_count
from scheduler_api.engine.koordinator.fast.count import Filler, fill_count
from scheduler_api.engine.koordinator.reference.state import KoordConfig
from scheduler_api.engine.model.kubernetes import pod_request
from scheduler_api.engine.model.snapshot import (
    LABEL_CPU_BIND_POLICY,
    LABEL_KOORD_QOS,
    ClusterSnapshot,
    Flavour,
    NodeSnapshot,
    PodSpec,
    ResourceAmounts,
    Zone,
)
from scheduler_api.engine.whatif.evaluate import place
from tests.engine.data_nrt_builders import container, pod

GI = 2**30


def _node(name: str, *, reserved: frozenset[int] = frozenset()) -> NodeSnapshot:
    """Two NUMA nodes of 8 cpus (4 cores of 2 threads each), 16 GiB each."""
    rows = tuple((cpu, cpu % 8 // 2 + 4 * (cpu // 8), 0, cpu // 8) for cpu in range(16))
    zone_amounts = {"cpu": ResourceAmounts(8000, 8000, 8000), "memory": ResourceAmounts(
        16 * GI, 16 * GI, 16 * GI)}  # fmt: skip
    return NodeSnapshot(
        name=name, flavour=Flavour.KOORDINATOR,
        allocatable={"cpu": 16000, "memory": 32 * GI, "pods": 110},
        topology_policies=("Restricted",), labels={LABEL_CPU_BIND_POLICY: "FullPCPUsOnly"},
        zones=tuple(Zone(n, f"node-{n}", zone_amounts) for n in (0, 1)),
        cpus=rows, kubelet_reserved_cpus=reserved,
    )  # fmt: skip


def _lsr_pod(cpu: str = "2", memory: str = "1Gi") -> PodSpec:
    """Built anew on each call: equal pods, never the same object (as two requests)."""
    return pod(container("c", {"cpu": cpu, "memory": memory}), name="p",
               labels={LABEL_KOORD_QOS: "LSR"}, priority=9000)  # fmt: skip


@pytest.fixture
def fills(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[int]]:
    """Each count the Filler really works out is recorded (its cap)."""
    done: list[int] = []
    real = Filler.fill

    def recorded(self: Filler, cap: int) -> int:
        done.append(cap)
        return real(self, cap)

    monkeypatch.setattr(Filler, "fill", recorded)
    yield done


def _count(node: NodeSnapshot, spec: PodSpec, config: KoordConfig | None = None, cap: int = 50):
    return fill_count(node, spec, config or KoordConfig(), (), pod_request(spec), cap)


def test_the_same_question_on_the_same_node_is_counted_once(fills: list[int]) -> None:
    node = _node("k0")
    first = _count(node, _lsr_pod())
    assert _count(node, _lsr_pod()) == first == 8  # 16 usable cpus, whole cores of 2
    assert len(fills) == 1


def test_a_pod_that_differs_is_counted_anew(fills: list[int]) -> None:
    """Both pods have the same cap (4), and only the NUMA nodes tell them apart: with a
    core of NUMA node 0 reserved, its 6 cpus take one 4-cpu copy and NUMA node 1 two."""
    node = _node("k0", reserved=frozenset({0, 1}))
    assert _count(node, _lsr_pod(cpu="4"), cap=4) == 3
    assert _count(node, _lsr_pod(cpu="2"), cap=4) == 4
    assert fills == [4, 4]


def test_another_config_or_cap_is_counted_anew(fills: list[int]) -> None:
    node = _node("k0")
    assert _count(node, _lsr_pod()) == 8
    assert _count(node, _lsr_pod(), KoordConfig(resource_weights={"cpu": 3})) == 8
    assert _count(node, _lsr_pod(), cap=3) == 3
    assert len(fills) == 3


def test_a_changed_node_is_counted_on_its_own_books(fills: list[int]) -> None:
    node = _node("k0")
    assert _count(node, _lsr_pod()) == 8
    changed = dataclasses.replace(node, kubelet_reserved_cpus=frozenset({0, 1}))
    assert _count(changed, _lsr_pod()) == 7  # one core of NUMA node 0 reserved
    assert _count(node, _lsr_pod()) == 8
    assert len(fills) == 2


def test_asked_again_after_one_node_changed_only_that_node_is_counted(
    fills: list[int],
) -> None:
    nodes = tuple(_node(f"k{i}") for i in range(4))
    first = place(ClusterSnapshot(nodes), _lsr_pod(), 1)
    assert first.capacity is not None and first.capacity.total == 32
    assert len(fills) == 4
    changed = dataclasses.replace(nodes[2], kubelet_reserved_cpus=frozenset({0, 1}))
    again = place(ClusterSnapshot((*nodes[:2], changed, nodes[3])), _lsr_pod(), 1)
    assert again.capacity is not None
    assert dict(again.capacity.per_node) == {"k0": 8, "k1": 8, "k2": 7, "k3": 8}
    assert len(fills) == 5


def test_the_key_is_worked_out_once_per_question(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every node a what-if counts asks for the key of the same pod and config."""
    spec, config = _lsr_pod(), KoordConfig()
    key = cache.question_key(spec, config)
    monkeypatch.setattr(cache.hashlib, "blake2b", None)  # a second digest fails
    assert cache.question_key(spec, config) == key


def test_many_questions_do_not_crowd_out_the_rest_of_the_memo() -> None:
    """The counts share one memo entry: past MEMO_KEPT questions they start afresh, and
    what else the node's memo keeps (spread plans, say) stays."""
    node, config = _node("k0"), KoordConfig()
    memo = kept_books(node, config, ()).memo
    memo["kept by someone else"] = True
    for mib in range(MEMO_KEPT + 5):
        assert _count(node, _lsr_pod(memory=f"{1024 + mib}Mi")) == 8
    assert memo["kept by someone else"] is True
    assert 0 < len(memo[koordinator_count.COUNT_KEY]) < MEMO_KEPT
