"""The cross-check switch (issue 29): with TOPOLENS_ENGINE_CROSSCHECK=1 every fast answer
of a what-if is recomputed by the reference and a disagreement raises with both."""

from __future__ import annotations

import pytest

from scheduler_api.engine import evaluate, place
from scheduler_api.engine.whatif import crosscheck
from scheduler_api.engine.whatif.judge import Judgement, NodeVerdict
from topology.adapters.records import snapshot_from_objects
from topology.demo import generate_demo_objects
from topology.services.whatif.service import pod_from_manifest


def pod(cpu: str, memory: str = "4Gi", labels: dict | None = None, annotations: dict | None = None):  # type: ignore[no-untyped-def]
    resources = {"cpu": cpu, "memory": memory}
    return pod_from_manifest(
        {
            "kind": "Pod",
            "metadata": {"name": "p", "labels": labels or {}, "annotations": annotations or {}},
            "spec": {
                "containers": [
                    {"name": "c", "resources": {"requests": resources, "limits": resources}}
                ]
            },
        }
    )


@pytest.fixture(scope="module")
def demo():  # type: ignore[no-untyped-def]
    """The seeded demo cluster (every flavour, reservations, pods holding cpus)."""
    return snapshot_from_objects(generate_demo_objects(nodes=16, seed=3))


@pytest.fixture
def switched_on(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(crosscheck.ENV, "1")


PODS = {
    "guaranteed whole cpus": pod("4"),
    "koordinator LSR binding whole cores": pod(
        "8", "8Gi", {"koordinator.sh/qosClass": "LSR"},
        {"scheduling.koordinator.sh/resource-spec": '{"preferredCPUBindPolicy":"FullPCPUs"}'},
    ),
    "koordinator LS": pod("2", "2Gi", {"koordinator.sh/qosClass": "LS"}),
    "crane exclusive": pod("6", "6Gi", None, {"topology.crane.io/cpu-policy": "exclusive"}),
    "too large anywhere": pod("48", "64Gi"),
}  # fmt: skip


@pytest.mark.usefixtures("switched_on")
@pytest.mark.parametrize("name", list(PODS))
def test_the_fast_answers_on_the_demo_cluster_are_the_references(demo, name) -> None:  # type: ignore[no-untyped-def]
    result = place(demo, PODS[name], 2)  # verdicts of every node, placements, capacity
    assert result.nodes


def test_a_wrong_fast_verdict_is_caught(demo, switched_on, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    original = Judgement.verdicts

    def bent(self: Judgement, rows: list[int]) -> tuple[NodeVerdict, ...]:
        verdicts = list(original(self, rows))
        for index, verdict in enumerate(verdicts):
            if verdict.scheduler_fits and verdict.score is not None:
                verdicts[index] = verdict._replace(score=verdict.score + 1)
                break
        return tuple(verdicts)

    monkeypatch.setattr(Judgement, "verdicts", bent)
    with pytest.raises(crosscheck.CrossCheckError, match="but the reference"):
        evaluate(demo, PODS["guaranteed whole cpus"])


def test_a_wrong_fast_count_is_caught(demo, switched_on, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    original = Judgement.fill_all
    monkeypatch.setattr(
        Judgement, "fill_all", lambda self, limit: [(n, c + 1) for n, c in original(self, limit)]
    )
    with pytest.raises(crosscheck.CrossCheckError, match="copy by copy with the reference"):
        place(demo, PODS["guaranteed whole cpus"], 0)


def test_off_by_default(demo, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.delenv(crosscheck.ENV, raising=False)
    original = Judgement.fill_all
    monkeypatch.setattr(
        Judgement, "fill_all", lambda self, limit: [(n, c + 1) for n, c in original(self, limit)]
    )
    place(demo, PODS["guaranteed whole cpus"], 0)  # not checked: no error
