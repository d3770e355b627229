"""Node verdicts encoded straight to bytes are exactly the reference JSON."""

from __future__ import annotations

from typing import Any

import orjson
import pytest

from scheduler_api.engine.model.snapshot import ClusterSnapshot
from scheduler_api.engine.whatif.evaluate import NodeVerdict, place
from tests.engine.test_whatif_properties import assert_shared_verdicts_agree
from topology.adapters.records import snapshot_from_objects
from topology.demo import generate_demo_objects
from topology.services.whatif import encoding as whatif_encoding
from topology.services.whatif.answer_cache import remembered_answer
from topology.services.whatif.encoding import RuleSets, encoded_shared
from topology.services.whatif.service import node_json, pod_from_manifest


def rule_sets(result: Any) -> RuleSets:
    return RuleSets(*result.rule_codes(), result.row_of)


def pod(cpu: str, memory: str, *, lsr: bool = False) -> dict[str, Any]:
    amounts = {"cpu": cpu, "memory": memory}
    labels = {"koordinator.sh/qosClass": "LSR"} if lsr else {}
    containers = [{"name": "c", "resources": {"requests": amounts, "limits": amounts}}]
    spec: dict[str, Any] = {"containers": containers, **({"priority": 9000} if lsr else {})}
    return {"metadata": {"name": "p", "labels": labels}, "spec": spec}


@pytest.fixture(scope="module")
def demo() -> ClusterSnapshot:
    return snapshot_from_objects(generate_demo_objects(nodes=40, seed=3))


@pytest.mark.parametrize("scheduler", ["auto", "scheduler-plugins", "crane", "koordinator"])
@pytest.mark.parametrize(
    "manifest", [pod("500m", "512Mi"), pod("8", "16Gi", lsr=True), pod("200", "1Ti")]
)
@pytest.mark.parametrize("replicas", [0, 3])
def test_a_whole_answer_written_from_shared_verdicts_is_the_reference_json(
    demo: ClusterSnapshot, manifest: dict[str, Any], scheduler: str, replicas: int
) -> None:
    spec = pod_from_manifest(manifest)
    reference = place(demo, spec, replicas, scheduler=scheduler).nodes
    result = place(demo, spec, replicas, scheduler=scheduler)
    assert_shared_verdicts_agree(result, reference)
    rules = rule_sets(result)
    expected = orjson.dumps([node_json(v, rules.id_of(v.node)) for v in reference])
    assert encoded_shared(result.shared_verdicts(), node_json, rule_sets(result)) == expected
    # again, the verdicts now built
    assert encoded_shared(result.shared_verdicts(), node_json, rule_sets(result)) == expected


def test_verdicts_asked_for_before_the_answer_are_written_as_they_are(
    demo: ClusterSnapshot,
) -> None:
    spec = pod_from_manifest(pod("8", "16Gi", lsr=True))
    reference = place(demo, spec, 1).nodes
    result = place(demo, spec, 1)
    for verdict in reference[::3]:
        assert result.verdict(verdict.node) == verdict
    rules = rule_sets(result)
    expected = orjson.dumps([node_json(v, rules.id_of(v.node)) for v in reference])
    assert encoded_shared(result.shared_verdicts(), node_json, rule_sets(result)) == expected


def test_kept_names_are_let_go_past_their_bound(
    demo: ClusterSnapshot, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(whatif_encoding, "NAMES_KEPT", 3)
    monkeypatch.setattr(whatif_encoding, "NAME_LISTS_KEPT", 1)
    monkeypatch.setattr(whatif_encoding, "_NAMES", {})
    monkeypatch.setattr(whatif_encoding, "_NAME_LISTS", {})
    result = place(demo, pod_from_manifest(pod("500m", "512Mi")), 0)
    rules = rule_sets(result)
    expected = orjson.dumps([node_json(v, rules.id_of(v.node)) for v in result.nodes])
    assert encoded_shared(result.shared_verdicts(), node_json, rule_sets(result)) == expected
    assert len(whatif_encoding._NAMES) <= 3
    names = ["a", 'quote"d']
    assert whatif_encoding._encoded_names(names) == [b'"a"', b'"quote\\"d"']
    assert list(whatif_encoding._NAME_LISTS.values()) == [(names, [b'"a"', b'"quote\\"d"'])]


def test_the_demo_answers_cover_every_kind_of_verdict(demo: ClusterSnapshot) -> None:
    """The comparison above sees refusals, detail (cpusets) and shared tails."""
    verdicts: list[NodeVerdict] = []
    for manifest in (pod("8", "16Gi", lsr=True), pod("200", "1Ti")):
        for scheduler in ("auto", "koordinator"):
            verdicts += place(demo, pod_from_manifest(manifest), 1, scheduler=scheduler).nodes
    assert any(v.reasons for v in verdicts)
    assert any(v.cpuset for v in verdicts)
    assert any(v.fits and not v.detailed for v in verdicts)


def test_a_node_object_of_another_shape_is_refused(demo: ClusterSnapshot) -> None:
    shared = place(demo, pod_from_manifest(pod("1", "1Gi")), 0).shared_verdicts()
    with pytest.raises(ValueError, match="must start with node, fits, score, rules"):
        encoded_shared(
            shared,
            lambda v, rules: {"fits": v.fits, "node": v.node, "score": v.score, "rules": rules},
            RuleSets([0] * len(shared.names), [()], lambda node: 0),
        )


def test_every_node_names_the_rules_that_judged_it(demo: ClusterSnapshot) -> None:
    """Rules differ node by node within one shared verdict: each node names its own list,
    and the lists are written once."""
    result = place(demo, pod_from_manifest(pod("1", "1Gi")), 0, scheduler="auto")
    rules = rule_sets(result)
    written = orjson.loads(encoded_shared(result.shared_verdicts(), node_json, rules))
    sets = rules.as_json()
    assert sorted(sets, key=lambda r: int(r[1:])) == [f"R{n}" for n in range(1, len(sets) + 1)]
    by_system: dict[str, set[str]] = {}
    for node in written:
        assert sets[node["rules"]] == list(result.rules_of(node["node"]))
        by_system.setdefault(node["system"], set()).add(sets[node["rules"]][0].split(":")[0])
    assert by_system["scheduler-plugins"] == {"NodeResourceTopologyMatch"}
    assert by_system["koordinator"] == {"NodeNUMAResource"}
    assert by_system["crane"] == {"crane-scheduler"}
    plugins = next(n for n in written if n["system"] == "scheduler-plugins")["rules"]
    assert [line.split(" ")[1].rstrip(":") for line in sets[plugins][1:]] == [
        "cpu-manager",
        "topology-manager",
        "memory-manager",
    ]


@pytest.mark.django_db
@pytest.mark.parametrize("size", [0, 4])
def test_encoded_parts_reach_a_plain_caller_decoded(settings, demo, size) -> None:
    """With or without the answer cache, a caller that takes no fragments gets lists."""
    settings.WHATIF_ANSWER_CACHE_SIZE = size
    nodes = [{"node": "a", "fits": True}]
    answer = remembered_answer(
        demo, {"q": size}, lambda: {"nodes": orjson.Fragment(orjson.dumps(nodes))}
    )
    assert answer == {"nodes": nodes}
