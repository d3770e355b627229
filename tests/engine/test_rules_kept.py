"""Each node's rules are kept on the index (`evaluate._rules_by_row`): a refreshed index
works out again only the rows whose node changed, and gives what working out every row
gives; ids stay with their lists."""

from __future__ import annotations

from dataclasses import replace

from scheduler_api.engine.model.snapshot import ContainerSpec, PodSpec
from scheduler_api.engine.schedulerplugins.fast.vector import NRTIndex
from scheduler_api.engine.whatif.evaluate import _rules_by_row
from scheduler_api.engine.whatif.judge import SYSTEM_BY_CODE, Judgement
from scheduler_api.engine.whatif.rules import node_rules
from scheduler_api.engine.whatif.systems import Scheduler, SystemConfigs
from topology.adapters import snapshot_from_objects
from topology.demo import generate_demo_objects

AMOUNTS = {"cpu": 1000, "memory": 1 << 30}
PLUGINS = Scheduler.SCHEDULER_PLUGINS
POD = PodSpec("ns", "p", containers=(ContainerSpec("c", AMOUNTS, AMOUNTS),))


def judged(index: NRTIndex) -> Judgement:
    return Judgement(index, (), POD, Scheduler.AUTO, SystemConfigs(), detailed=0)


def reference(judgement: Judgement) -> list[tuple[str, ...]]:
    return [
        node_rules(node, SYSTEM_BY_CODE[code])
        for node, code in zip(judgement.index.nodes, judgement.systems.tolist(), strict=True)
    ]


def test_a_refreshed_index_works_out_only_its_changed_rows() -> None:
    nodes = list(snapshot_from_objects(generate_demo_objects(nodes=8)).nodes)
    index = NRTIndex(tuple(nodes))
    first = _rules_by_row(judged(index))
    assert first.rules == reference(judged(index))
    assert _rules_by_row(judged(index)) is first  # nothing changed: kept as it is

    systems = judged(index).systems.tolist()
    row = next(r for r, code in enumerate(systems) if SYSTEM_BY_CODE[code] is PLUGINS)
    attributes = {**nodes[row].nrt_attributes, "topologyManagerPolicy": "restricted"}
    nodes[row] = replace(nodes[row], nrt_attributes=attributes)
    refreshed = index.refreshed(nodes)
    assert refreshed is not None
    again = _rules_by_row(judged(refreshed))
    assert again.rules == reference(judged(refreshed)) != first.rules
    unchanged = [r for r in range(len(nodes)) if r != row]
    assert [again.codes[r] for r in unchanged] == [first.codes[r] for r in unchanged]
    assert again.distinct[again.codes[row]] == again.rules[row]
