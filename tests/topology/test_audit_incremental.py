"""The stored audit replays only the pods of nodes whose snapshot object is new (the
snapshot cache keeps an unchanged node as the same object), and gives the reference's
verdicts (every pod replayed) whatever it kept."""

from __future__ import annotations

from dataclasses import replace

from topology.demo import generate_demo_objects
from topology.services.audit.replay import audit_pods
from topology.services.audit.store import Kept, audit_facts
from topology.services.diagnosis.offline import facts_from_objects


def test_only_the_pods_of_a_changed_node_are_replayed() -> None:
    facts = facts_from_objects(generate_demo_objects(nodes=6, seed=1)).facts
    kept = Kept()
    first, replayed = audit_facts(facts, kept)
    assert replayed == len(first) > 0
    again, replayed = audit_facts(facts, kept)
    assert replayed == 0 and again == first
    changed = facts.snapshot.nodes[0]
    nodes = (replace(changed), *facts.snapshot.nodes[1:])  # equal, but a new object
    moved = replace(facts, snapshot=replace(facts.snapshot, nodes=nodes))
    third, replayed = audit_facts(moved, kept)
    assert replayed == len(facts.live_pods_by_node.get(changed.name, []))
    reference = {f"{a.namespace}/{a.name}": a for a in audit_pods(moved)}
    assert third == reference


def test_a_full_audit_is_due_on_schedule(settings) -> None:
    facts = facts_from_objects(generate_demo_objects(nodes=4, seed=2)).facts
    kept = Kept()
    first, _ = audit_facts(facts, kept)
    settings.TOPOLENS_AUDIT_FULL_SECONDS = 0  # every refresh replays every pod
    _, replayed = audit_facts(facts, kept)
    assert replayed == len(first)
