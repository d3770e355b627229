"""Pod diagnosis (issue 30 §2): Pending and rejected pods judged on a dump, the refusals
grouped, the nearest misses as the change that would let the pod fit, alignment told
apart from capacity, and the kubelet's admission replayed provider by provider."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest

from topology.services.diagnosis.offline import facts_from_objects
from topology.services.diagnosis.pods import diagnose_pods

from .diagnosis_objects import REJECTED, UNSCHEDULABLE, event, node, nrt, pod, split_cluster


def diagnosed(objects: list[dict[str, Any]], **changes: Any) -> dict[str, dict[str, Any]]:
    loaded = facts_from_objects(objects)
    assert loaded.errors == []
    facts = dataclasses.replace(loaded.facts, **changes)
    return {f"{d['namespace']}/{d['name']}": d for d in diagnose_pods(facts)}


def test_only_pending_and_rejected_pods_are_diagnosed() -> None:
    objects = [*split_cluster(), pod("running", "2", node_name="n2")]
    assert set(diagnosed(objects)) == {"prod/waiting", "prod/refused"}


def test_a_pod_the_zones_cannot_hold_is_an_alignment_miss() -> None:
    waiting = diagnosed(split_cluster())["prod/waiting"]
    assert waiting["state"] == "pending" and waiting["reason"] == "Unschedulable"
    assert waiting["scheduler"] == "scheduler-plugins"
    assert waiting["judged_by"]["profile"] == "topo-aware-scheduler"
    assert waiting["fits_now"] == 0 and waiting["alignment_only"] is True
    assert waiting["refusals"] == [
        {
            "check": "single-numa-node",
            "nodes": 2,
            "example": "n1: cpu short by 4 CPUs on zone 0; single-numa-node",
        }
    ]
    assert [m["node"] for m in waiting["nearest"]] == ["n1", "n2"]  # 2 short before 3
    assert waiting["nearest"][0]["change"] == (
        "needs 2 more CPUs free on one NUMA zone of node n1; its best zone has 8 CPUs "
        "free, the pod needs 10 CPUs"
    )


def test_a_pod_larger_than_any_node_is_a_capacity_miss() -> None:
    objects = [node("n1"), nrt("n1"), pod("huge", "20", status=UNSCHEDULABLE)]
    huge = diagnosed(objects)["prod/huge"]
    assert huge["alignment_only"] is False
    assert huge["nearest"] == [
        {
            "node": "n1",
            "change": "needs 4 more CPUs free on node n1; it has 16 CPUs free, the pod "
            "needs 20 CPUs",
            "alignment": False,
        }
    ]


def test_a_pod_that_fits_now_has_no_nearest_misses() -> None:
    objects = [node("n1"), nrt("n1"), node("n2"), nrt("n2"), pod("small", "4")]
    small = diagnosed(objects)["prod/small"]
    assert small["fits_now"] == 2 and small["fits_by_system"] == {"scheduler-plugins": 2}
    assert small["nearest"] == [] and small["alignment_only"] is False


def test_a_rejected_pod_names_the_provider_without_an_acceptable_hint() -> None:
    refused = diagnosed(split_cluster())["prod/refused"]
    assert refused["state"] == "rejected" and refused["node"] == "n1"
    admission = refused["admission"]
    assert admission["policy"] == "single-numa-node" and admission["admitted_now"] is False
    providers = {p["resource"]: p for p in admission["providers"]}
    assert providers["cpu"]["accepted"] is False and providers["memory"]["accepted"] is True
    assert providers["cpu"]["hints"] == [{"numa": [0, 1], "preferred": True}]
    assert admission["blocking"] == ["cpu"]
    assert any("not at the moment of the refusal" in n for n in admission["notes"])


def test_a_rejected_pod_that_would_fit_now_says_so() -> None:
    objects = [node("n1"), nrt("n1", (8, 8)), pod("refused", "6", node_name="n1", status=REJECTED)]
    admission = diagnosed(objects)["prod/refused"]["admission"]
    assert admission["admitted_now"] is True and admission["blocking"] == []


def test_events_are_counted_per_pod_and_reason() -> None:
    waiting = diagnosed(split_cluster())["prod/waiting"]
    assert [(e["reason"], e["count"]) for e in waiting["events"]] == [("FailedScheduling", 5)]


def test_data_older_than_the_threshold_is_said() -> None:
    old = diagnosed(split_cluster(), data_age_seconds=900.0, stale_after_seconds=600.0)
    fresh = diagnosed(split_cluster(), data_age_seconds=30.0, stale_after_seconds=600.0)
    assert old["prod/waiting"]["stale_data"] is True
    assert fresh["prod/waiting"]["stale_data"] is False


@pytest.mark.parametrize("reason", ["FailedScheduling"])
def test_the_event_gives_the_reason_when_the_status_has_none(reason: str) -> None:
    objects = [node("n1"), nrt("n1"), pod("quiet", "10"), event("quiet", reason)]
    assert diagnosed(objects)["prod/quiet"]["reason"] == reason


def test_a_pod_the_engine_cannot_judge_is_diagnosed_with_why(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from topology.services.diagnosis import pods as pods_module

    def refuse(*args: Any, **kwargs: Any) -> None:
        raise ValueError("a quantity the engine cannot read")

    monkeypatch.setattr(pods_module, "place", refuse)
    waiting = diagnosed(split_cluster())["prod/waiting"]
    assert waiting["why"] == "the engine cannot judge this pod: a quantity the engine cannot read"
    assert waiting["fits_now"] == 0 and waiting["refusals"] == []


def test_replicas_of_one_shape_are_judged_once(monkeypatch: pytest.MonkeyPatch) -> None:
    from topology.services.diagnosis import pods as pods_module

    calls: list[str] = []
    real = pods_module.place

    def counted(snapshot: Any, spec: Any, *args: Any, **kwargs: Any) -> Any:
        calls.append(spec.name)
        return real(snapshot, spec, *args, **kwargs)

    monkeypatch.setattr(pods_module, "place", counted)
    objects = [*split_cluster(), pod("waiting-2", status=UNSCHEDULABLE), pod("other", "12")]
    found = diagnosed(objects)
    assert len(calls) == 2  # the 10-CPU shape (three pods) and the 12-CPU one
    assert found["prod/waiting-2"]["nearest"] == found["prod/waiting"]["nearest"]
    assert found["prod/refused"]["admission"]["node"] == "n1"  # its own, not shared


def test_a_pending_pod_that_fits_now_names_where() -> None:
    objects = [node("n1"), nrt("n1", (8, 8)), node("n2"), nrt("n2", (5, 3)), pod("small", "6")]
    assert diagnosed(objects)["prod/small"]["fits_on"] == ["n1"]
