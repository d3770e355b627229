"""How a tracked prediction recognises its pods and compares where they landed (plain
values, no database): `MatchKeys` and `compare_landed`."""

from __future__ import annotations

import pytest

from topology.services.audit.predictions import Landed, MatchKeys, compare_landed

RS = {"kind": "ReplicaSet", "name": "web-1", "controller": True}


@pytest.mark.parametrize(
    ("manifest", "pod", "matches"),
    [
        pytest.param({"name": "a"}, ("default", "a", []), True, id="same-name"),
        pytest.param({"name": "a"}, ("default", "b", []), False, id="other-name"),
        pytest.param({"name": "a", "namespace": "x"}, ("default", "a", []), False,
                     id="other-namespace"),
        pytest.param({"generateName": "job-"}, ("default", "job-xk2p", []), True,
                     id="generate-name-prefix"),
        pytest.param({"generateName": "job-"}, ("default", "other-xk2p", []), False,
                     id="generate-name-other"),
        pytest.param({"name": "a", "ownerReferences": [RS]}, ("default", "zzz", [RS]), True,
                     id="owner-wins-over-name"),
        pytest.param({"ownerReferences": [RS]}, ("default", "web-1-x", [dict(RS, name="web-2")]),
                     False, id="other-owner"),
        pytest.param({"ownerReferences": [{"kind": "Job", "name": "j"}]},
                     ("default", "j-1", [{"kind": "Job", "name": "j"}]), True,
                     id="owner-without-controller-flag"),
        pytest.param({}, ("default", "anything", []), False, id="nothing-to-match-by"),
    ],
)  # fmt: skip
def test_match_keys(manifest: dict, pod: tuple, matches: bool) -> None:
    keys = MatchKeys.of_manifest({"metadata": manifest})
    assert keys.matches(*pod) is matches


def placed(replica: int, node: str, zones: list[int], cpuset: list[int] | None) -> dict:
    return {"replica": replica, "node": node, "numa_zones": zones, "cpuset": cpuset}


def pod(name: str, node: str, zones: tuple[int, ...] | None, cpus: set[int] | None) -> Landed:
    return Landed("ns", name, f"uid-{name}", node, "koordinator", zones,
                  frozenset(cpus) if cpus is not None else None)  # fmt: skip


def test_each_pod_takes_the_closest_replica_left() -> None:
    predicted = [placed(0, "n1", [0], [0, 1]), placed(1, "n2", [1], [8, 9])]
    compared = compare_landed(
        predicted, [pod("b", "n2", (1,), {8, 9}), pod("a", "n1", (0,), {0, 1})]
    )
    assert [(c["name"], c["predicted"]["replica"], c["held"]) for c in compared] == [
        ("b", 1, True),
        ("a", 0, True),
    ]


def test_what_differs_is_named() -> None:
    predicted = [placed(0, "n1", [0], [0, 1])]
    (item,) = compare_landed(predicted, [pod("a", "n1", (1,), {8, 9})])
    assert item["differs"] == ["zones", "cpuset"] and not item["held"]
    (item,) = compare_landed(predicted, [pod("a", "n9", (0,), {0, 1})])
    assert item["differs"] == ["node"]


def test_an_unpublished_placement_is_compared_by_node_only() -> None:
    (item,) = compare_landed([placed(0, "n1", [0], [0, 1])], [pod("a", "n1", None, None)])
    assert item["held"] and not item["published"] and item["numa_zones"] == []


def test_a_pod_beyond_the_predicted_replicas_differs_by_node() -> None:
    compared = compare_landed([], [pod("a", "n1", (0,), {0})])
    assert compared[0]["differs"] == ["node"] and compared[0]["predicted"] is None
