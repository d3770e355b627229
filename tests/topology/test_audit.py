"""The agreement audit (issue 32) on dumps: each verdict and each not-judgeable reason,
on the demo cluster's pods as generated (placed the way their scheduler would) and on
copies of them placed against the engine's choice on purpose.

Plain pytest, no database: `generate_demo_objects` -> `facts_from_objects` -> audit.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from typing import Any

import pytest

from scheduler_api.engine.model.snapshot import ANN_CRANE_RESULT, ANN_KOORD_RESOURCE_STATUS
from topology.demo import generate_demo_objects
from topology.services.audit.replay import (
    AGREE,
    DIFFERS,
    NO_PLACEMENT,
    NODE_INFEASIBLE,
    NOT_JUDGEABLE,
    ZONES,
    PodAudit,
    audit_pods,
)
from topology.services.audit.report import audit_report, rates
from topology.services.diagnosis.offline import facts_from_objects

Objects = list[dict[str, Any]]


@pytest.fixture(scope="module")
def objects() -> Objects:
    return generate_demo_objects(nodes=12, seed=3)


def audit(objects: Objects) -> dict[str, PodAudit]:
    facts = facts_from_objects(objects).facts
    return {f"{a.namespace}/{a.name}": a for a in audit_pods(facts)}


def key(pod: dict[str, Any]) -> str:
    return f"{pod['metadata']['namespace']}/{pod['metadata']['name']}"


def running_pods(objects: Objects, annotation: str) -> list[dict[str, Any]]:
    return [
        o for o in objects
        if o.get("kind") == "Pod" and o["spec"].get("nodeName")
        and annotation in o["metadata"].get("annotations", {})
        and o.get("status", {}).get("phase") == "Running"
    ]  # fmt: skip


def edited(
    objects: Objects, target: dict[str, Any], edit: Callable[[dict[str, Any]], None]
) -> Objects:
    out = []
    for obj in objects:
        if obj is target:
            obj = copy.deepcopy(obj)
            edit(obj)
        out.append(obj)
    return out


def agreeing(objects: Objects, annotation: str) -> tuple[dict[str, Any], PodAudit]:
    audits = audit(objects)
    for pod in running_pods(objects, annotation):
        found = audits.get(key(pod))
        if found is not None and found.verdict == AGREE:
            return pod, found
    raise AssertionError(f"no demo pod with {annotation} agrees")


def test_the_demo_is_judged_and_its_koordinator_and_crane_pods_agree(objects: Objects) -> None:
    audits = list(audit(objects).values())
    by_system = rates(audits)
    assert {"koordinator", "crane"} <= set(by_system)
    for system in ("koordinator", "crane"):
        rate = by_system[system]
        assert rate["judged"] > 0 and rate["agree"] > 0
    assert {a.verdict for a in audits} <= {AGREE, DIFFERS, NOT_JUDGEABLE}
    for found in audits:
        if found.verdict == AGREE:
            assert found.engine_feasible and not found.differs and not found.why
            assert set(found.real.numa_zones) == set(found.engine.numa_zones)
        if found.verdict == DIFFERS:  # the demo says which pods it placed by its own rules
            assert "placement note on the pod: placed by the demo generator" in found.why


def test_a_pod_moved_to_another_zone_differs_by_zones(objects: Objects) -> None:
    pod, before = agreeing(objects, ANN_KOORD_RESOURCE_STATUS)
    status = json.loads(pod["metadata"]["annotations"][ANN_KOORD_RESOURCE_STATUS])
    numa = status["numaNodeResources"]
    zones = {entry["node"] for entry in numa}
    other = next(z for z in range(8) if z not in zones)

    def move(obj: dict[str, Any]) -> None:
        moved = dict(status, numaNodeResources=[dict(e, node=other) for e in numa])
        moved.pop("cpuset", None)
        obj["metadata"]["annotations"][ANN_KOORD_RESOURCE_STATUS] = json.dumps(moved)

    after = audit(edited(objects, pod, move))[key(pod)]
    assert after.verdict == DIFFERS and ZONES in after.differs, after
    assert after.real.numa_zones == (other,) and after.engine.numa_zones == before.engine.numa_zones
    assert after.why.startswith(f"it holds NUMA {other}; the engine would give it NUMA ")


def test_a_pod_its_node_could_not_hold_differs_by_node_infeasible(objects: Objects) -> None:
    pod, _ = agreeing(objects, ANN_CRANE_RESULT)

    def enlarge(obj: dict[str, Any]) -> None:
        for container in obj["spec"]["containers"]:
            container["resources"] = {"requests": {"cpu": "4000", "memory": "1Gi"},
                                      "limits": {"cpu": "4000", "memory": "1Gi"}}  # fmt: skip

    after = audit(edited(objects, pod, enlarge))[key(pod)]
    assert after.verdict == DIFFERS and after.differs == (NODE_INFEASIBLE,)
    assert not after.engine_feasible and "infeasible" in after.why


def test_a_pod_with_no_published_placement_is_not_judgeable(objects: Objects) -> None:
    pod, _ = agreeing(objects, ANN_KOORD_RESOURCE_STATUS)

    def unpublish(obj: dict[str, Any]) -> None:
        obj["metadata"]["annotations"].pop(ANN_KOORD_RESOURCE_STATUS)

    after = audit(edited(objects, pod, unpublish))[key(pod)]
    assert (after.verdict, after.why) == (NOT_JUDGEABLE, NO_PLACEMENT)


def test_a_pod_of_an_unknown_scheduler_is_not_judgeable(objects: Objects) -> None:
    pod, _ = agreeing(objects, ANN_CRANE_RESULT)

    def foreign(obj: dict[str, Any]) -> None:
        obj["spec"]["schedulerName"] = "in-house-scheduler"
        obj["metadata"]["labels"] = {}
        annotations = obj["metadata"]["annotations"]
        for name in [n for n in annotations if n != ANN_CRANE_RESULT]:
            annotations.pop(name)

    after = audit(edited(objects, pod, foreign))[key(pod)]
    assert after.verdict == NOT_JUDGEABLE and after.why.startswith("unknown scheduler")
    assert after.real.numa_zones  # what is known of it is still shown


def test_a_pod_on_a_node_not_in_the_dump_is_not_judgeable(objects: Objects) -> None:
    pod, _ = agreeing(objects, ANN_KOORD_RESOURCE_STATUS)
    name = pod["spec"]["nodeName"]
    without = [
        o for o in objects if not (o.get("kind") == "Node" and o["metadata"]["name"] == name)
    ]
    after = audit(without).get(key(pod))
    assert after is not None and after.verdict == NOT_JUDGEABLE
    assert after.why.startswith("data missing")


def test_the_report_has_the_documented_shape(objects: Objects) -> None:
    facts = facts_from_objects(objects).facts
    report = audit_report(audit_pods(facts), data_age_seconds=None)
    for rate in report["rates"].values():
        assert set(rate) == {"judged", "agree", "node_infeasible", "zones_differ",
                             "cpuset_differs", "not_judgeable"}  # fmt: skip
        assert all(isinstance(v, int) for v in rate.values())
    pod = report["pods"][0]
    assert set(pod) == {"namespace", "name", "node", "system", "verdict", "differs", "real",
                        "engine", "why"}  # fmt: skip
    assert set(pod["real"]) == {"numa_zones", "cpuset"}
    assert set(pod["engine"]) == {"feasible", "numa_zones", "cpuset"}
    json.dumps(report)
