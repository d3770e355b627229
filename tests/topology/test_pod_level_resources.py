"""spec.resources (pod-level resources) read by the pod parser, stored, and judged."""

from __future__ import annotations

from typing import Any

import pytest

from tests.topology.helpers import sample_items
from topology.adapters import pod_spec_of
from topology.models import Cluster, Pod
from topology.parsers import ObjectParseError
from topology.parsers.pod import parse_pod
from topology.services.mirror.importer import import_objects
from topology.services.whatif.service import mirror_snapshot

GI = 2**30


def pod(resources: Any, containers: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    return {
        "metadata": {"name": "p", "namespace": "ns"},
        "spec": {
            "containers": containers or [{"name": "c"}],
            "resources": resources,
        },
    }


def app(requests: dict[str, str] | None = None, limits: dict[str, str] | None = None) -> dict:
    return {"name": "app", "resources": {"requests": requests or {}, "limits": limits or {}}}


@pytest.mark.parametrize(
    ("name", "resources", "containers", "expected"),
    [
        ("unset", None, None, {}),
        ("empty", {}, None, {}),
        (
            "requests only",
            {"requests": {"cpu": "2", "memory": "1Gi"}},
            None,
            {"requests": {"cpu": 2000, "memory": GI}, "limits": {}},
        ),
        (
            "limits default the requests",
            {"limits": {"cpu": "4", "memory": "2Gi"}},
            None,
            {
                "requests": {"cpu": 4000, "memory": 2 * GI},
                "limits": {"cpu": 4000, "memory": 2 * GI},
            },
        ),
        (
            "a container's request comes before the pod limit",
            {"limits": {"cpu": "4", "memory": "2Gi"}},
            [app({"cpu": "500m"})],
            {"requests": {"cpu": 500, "memory": 2 * GI}, "limits": {"cpu": 4000, "memory": 2 * GI}},
        ),
        (
            "container hugepages limits default the pod's",
            {"requests": {"cpu": "1"}},
            [app(limits={"hugepages-2Mi": "4Mi"})],
            {
                "requests": {"cpu": 1000, "hugepages-2Mi": 4 * 2**20},
                "limits": {"hugepages-2Mi": 4 * 2**20},
            },
        ),
    ],  # fmt: skip
)
def test_spec_resources_are_read_and_defaulted_as_the_api_server_does(
    name: str, resources: Any, containers: Any, expected: dict[str, Any]
) -> None:
    record = parse_pod(pod(resources, containers))
    assert record.resources == expected
    assert dict(pod_spec_of(record).pod_resources) == expected


@pytest.mark.parametrize(
    ("resources", "field", "words"),
    [
        ([], "spec.resources", "expected"),
        ({"requests": {"cpu": "lots"}}, "spec.resources.requests", "cpu"),
        ({"limits": []}, "spec.resources.limits", ""),
        (
            {"requests": {"nvidia.com/gpu": "1"}},
            "spec.resources.requests.nvidia.com/gpu",
            "only cpu, memory and hugepages",
        ),
    ],  # fmt: skip
)
def test_a_bad_spec_resources_is_a_clear_field_error(
    resources: Any, field: str, words: str
) -> None:
    with pytest.raises(ObjectParseError) as raised:
        parse_pod(pod(resources))
    assert raised.value.field == field
    assert words in raised.value.message


def test_the_qos_class_follows_the_pod_level_when_status_has_none() -> None:
    both = {"cpu": "2", "memory": "1Gi"}
    guaranteed = parse_pod(pod({"requests": both, "limits": both}, [app({"cpu": "1"})]))
    assert guaranteed.qos_class == "Guaranteed"
    burstable = parse_pod(pod({"requests": both}, [app(both, both)]))
    assert burstable.qos_class == "Burstable"


@pytest.mark.django_db
def test_spec_resources_are_mirrored_and_read_back_for_the_engine() -> None:
    items = sample_items("cluster-small.json")
    bound = next(i for i in items if i["kind"] == "Pod" and i["spec"].get("nodeName"))
    bound["spec"]["resources"] = {"requests": {"cpu": "64"}}
    keep = [i for i in items if i["kind"] != "Pod" or i is bound]
    assert import_objects(cluster_name="plr", objects=keep).ok
    row = Pod.objects.get(name=bound["metadata"]["name"])
    assert row.resources == {"requests": {"cpu": 64000}, "limits": {}}
    snapshot = mirror_snapshot(Cluster.objects.get(name="plr"))
    node = next(n for n in snapshot.nodes if n.name == bound["spec"]["nodeName"])
    assert node.requested["cpu"] == 64000  # the pod's own request, not its containers'
