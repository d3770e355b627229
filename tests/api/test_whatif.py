"""clusters/{cluster}/whatif: a Pod manifest or the compact form; 200 now, or 202 and a task."""

from __future__ import annotations

from typing import Any

import pytest
from django.test import override_settings
from rest_framework.test import APIClient

from scheduler_api.choices import TaskState
from scheduler_api.models import WhatIfTask
from scheduler_api.services.whatif import compact_pod_manifest
from scheduler_api.services.whatif_tasks import whatif_task_run
from topology.models import Cluster
from topology.services.whatif.service import run_whatif

from .mixins import ClientFor

pytestmark = pytest.mark.django_db
WHATIF = "/api/v1/clusters/trio/whatif"
RESULT_KEYS = {
    "scheduler", "judged_by", "scoring", "data_age_seconds", "groups", "nodes", "placements",
    "capacity",
}  # fmt: skip
VERDICT_KEYS = {
    "node", "fits", "scheduler_fits", "admission", "score", "reasons", "numa_zones", "cpuset",
    "annotations", "rules",
}  # fmt: skip
TOPO_AWARE = "topo-aware-scheduler"  # scheduler-plugins' own install name: a built-in profile


def manifest(cpu: str = "2", memory: str = "1Gi", scheduler_name: str = "") -> dict[str, Any]:
    resources = {"cpu": cpu, "memory": memory}
    spec: dict[str, Any] = {
        "containers": [{"name": "db", "resources": {"requests": resources, "limits": resources}}]
    }
    if scheduler_name:
        spec["schedulerName"] = scheduler_name
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "db", "namespace": "prod"},
        "spec": spec,
    }


def same_answer(one: dict[str, Any], other: dict[str, Any]) -> bool:
    """Equal but for the data age, which grows between two runs."""
    return {**one, "data_age_seconds": 0} == {**other, "data_age_seconds": 0}


def post(client: APIClient, body: dict[str, Any], path: str = WHATIF) -> Any:
    return client.post(path, body, format="json")


@pytest.mark.parametrize(
    ("persona", "status"),
    [("anonymous", 401), ("outsider", 403), ("viewer", 403), ("operator", 200), ("admin", 200)],
)
def test_operators_and_admins_run_what_if(
    persona: str, status: int, client_for: ClientFor, trio: Cluster
) -> None:
    response = post(client_for(persona), {"pod": manifest()})
    assert response.status_code == status, response.content


def test_it_answers_with_the_offline_commands_shape(operator: APIClient, trio: Cluster) -> None:
    response = post(operator, {"pod": manifest(), "replicas": 2})
    assert response.status_code == 200, response.content
    body = response.json()
    assert RESULT_KEYS <= set(body)
    assert len(body["nodes"]) == 3 and VERDICT_KEYS <= set(body["nodes"][0])
    assert same_answer(body, run_whatif(cluster=trio, pod=manifest(), replicas=2))


def test_each_node_names_the_rules_that_judged_it(operator: APIClient, trio: Cluster) -> None:
    body = post(operator, {"pod": manifest()}).json()
    for node in body["nodes"]:
        heads = [rule.split(":")[0] for rule in body["rules"][node["rules"]]]
        expected = {
            "scheduler-plugins": ["NodeResourceTopologyMatch"] + ["kubelet"] * 3,
            "koordinator": ["NodeNUMAResource", "kubelet"],
            "crane": ["crane-scheduler", "crane-agent"],
        }[node["system"]]
        assert heads == expected, node
        if node["admission"] is not None:
            assert "memory_numa_zones" in node["admission"]


def test_a_pod_no_profile_or_mark_places_is_placed_per_system_never_across(
    operator: APIClient, trio: Cluster
) -> None:
    body = post(operator, {"pod": manifest(), "replicas": 2}).json()
    assert body["judged_by"]["system"] == "auto" and body["judged_by"]["profile"] is None
    assert body["placements"] == []  # nobody knows which system sees it
    systems = [node["system"] for node in body["nodes"]]
    assert systems == sorted(systems, key=[g["system"] for g in body["groups"]].index)
    for group in body["groups"]:
        assert [p["replica"] for p in group["placements"]] == [0, 1]
        assert {p["system"] for p in group["placements"]} == {group["system"]}


def test_the_pods_scheduler_name_picks_the_profile_that_judges_it(
    operator: APIClient, trio: Cluster
) -> None:
    body = post(operator, {"pod": manifest(scheduler_name=TOPO_AWARE), "replicas": 2}).json()
    assert body["judged_by"]["profile"] == TOPO_AWARE
    assert body["judged_by"]["system"] == "scheduler-plugins"
    assert {node["system"] for node in body["nodes"]} == {"scheduler-plugins"}
    assert len(body["placements"]) == 2
    # the what-if's own scheduler_name overrides the manifest's
    other = post(operator, {"pod": manifest(), "scheduler_name": "koord-scheduler"}).json()
    assert other["judged_by"]["system"] == "koordinator"


def test_a_question_asked_again_is_answered_from_memory_alike(
    operator: APIClient, trio: Cluster, settings: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    from topology.services.whatif import service as whatif

    settings.WHATIF_SNAPSHOT_CACHE_SIZE = 2
    runs: list[int] = []
    real = whatif.judge_question
    monkeypatch.setattr(whatif, "judge_question", lambda *a, **k: runs.append(1) or real(*a, **k))
    first = post(operator, {"pod": manifest(), "replicas": 2})
    again = post(operator, {"pod": manifest(), "replicas": 2})
    assert first.status_code == again.status_code == 200
    assert len(runs) == 1  # the second came from the answer cache, encoded parts and all
    assert same_answer(again.json(), first.json())
    assert list(again.json()) == list(first.json())


def test_a_pod_that_fits_nowhere_is_a_200_with_verdicts(operator: APIClient, trio: Cluster) -> None:
    response = post(operator, {"pod": manifest(cpu="5000", scheduler_name=TOPO_AWARE)})
    assert response.status_code == 200
    body = response.json()
    assert not any(node["fits"] for node in body["nodes"])
    assert all(node["reasons"] for node in body["nodes"])
    assert body["placements"][0]["node"] is None and body["capacity"]["total"] == 0


def test_the_compact_form_is_the_same_question(operator: APIClient, trio: Cluster) -> None:
    compact = {
        "containers": [
            {
                "name": "db",
                "requests": {"cpu": "2", "memory": "1Gi"},
                "limits": {"cpu": 2, "memory": "1Gi"},
            }
        ],
        "name": "db",
        "namespace": "prod",
        "scheduler": "scheduler-plugins",
    }
    from_compact = post(operator, compact).json()
    from_manifest = post(operator, {"pod": manifest(), "scheduler": "scheduler-plugins"}).json()
    assert same_answer(from_compact, from_manifest)
    # issue 28: the schema allows "pod": null; it is taken as "not given"
    from_null_pod = post(operator, {**compact, "pod": None}).json()
    assert same_answer(from_compact, from_null_pod)


def test_the_compact_form_writes_the_annotations_schedulers_read() -> None:
    pod = compact_pod_manifest(
        {
            "containers": [{"name": "app", "requests": {"cpu": "4"}, "limits": {"cpu": "4"}}],
            "labels": {"app": "web"},
            "crane_cpu_policy": "exclusive",
            "crane_topology_awareness": False,
            "koordinator_qos_class": "LSR",
            "koordinator_cpu_bind_policy": "FullPCPUs",
            "koordinator_cpu_bind_required": True,
            "koordinator_cpu_exclusive_policy": "PCPULevel",
        }
    )
    assert pod["metadata"]["labels"] == {"app": "web", "koordinator.sh/qosClass": "LSR"}
    assert pod["metadata"]["annotations"] == {
        "topology.crane.io/cpu-policy": "exclusive",
        "topology.crane.io/topology-awareness": "false",
        "scheduling.koordinator.sh/resource-spec": (
            '{"requiredCPUBindPolicy":"FullPCPUs","preferredCPUExclusivePolicy":"PCPULevel"}'
        ),
    }
    assert pod["spec"]["containers"] == [
        {"name": "app", "resources": {"requests": {"cpu": "4"}, "limits": {"cpu": "4"}}}
    ]


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({}, "pod"),
        ({"pod": manifest(), "containers": [{"name": "a"}]}, "containers"),
        ({"pod": ["not", "a", "pod"]}, "pod"),
        ({"containers": []}, "containers"),
        ({"containers": [{"name": "a", "requests": {"cpu": "lots"}}]}, "containers.0.requests.cpu"),
        ({"pod": manifest(), "scheduler": "kube-scheduler"}, "scheduler"),
        ({"pod": manifest(), "scoring": "Random"}, "scoring"),
        ({"pod": manifest(), "weights": {"cpu": 0}}, "weights.cpu"),
        ({"pod": manifest(), "replicas": -1}, "replicas"),
        ({"pod": None}, "pod"),  # null is "not given", and then nothing is asked
        ({"pod": {"kind": "Pod", "metadata": {"name": "x"}, "spec": {}}}, "pod.spec.containers"),
        (  # pod-level resources: only cpu, memory and hugepages, as Kubernetes validates
            {
                "pod": {
                    **manifest(),
                    "spec": {
                        **manifest()["spec"],
                        "resources": {"requests": {"nvidia.com/gpu": "1"}},
                    },
                }
            },
            "pod.spec.resources.requests.nvidia.com/gpu",
        ),
    ],
)
def test_a_malformed_question_is_a_400_with_field_errors(
    operator: APIClient, trio: Cluster, body: dict[str, Any], field: str
) -> None:
    response = post(operator, body)
    assert response.status_code == 400, response.content
    error = response.json()
    assert error["detail"] == "Invalid input."
    assert field in error["errors"], error["errors"]
    assert not WhatIfTask.objects.exists()


def test_an_unknown_cluster_is_404(operator: APIClient, trio: Cluster) -> None:
    assert post(operator, {"pod": manifest()}, "/api/v1/clusters/nope/whatif").status_code == 404


@override_settings(API_WHATIF_SYNC_MAX_REPLICAS=3)
def test_many_replicas_run_in_the_background(
    operator: APIClient, trio: Cluster, django_capture_on_commit_callbacks: Any
) -> None:
    with django_capture_on_commit_callbacks(execute=False) as callbacks:
        response = post(operator, {"pod": manifest(), "replicas": 4})
    assert response.status_code == 202, response.content
    task = WhatIfTask.objects.get()
    assert response["Location"] == f"/api/v1/tasks/{task.pk}"
    assert response.json()["state"] == "pending" and response.json()["result"] is None
    assert len(callbacks) == 1  # enqueued only once the row is committed
    pending = operator.get(response["Location"]).json()
    assert (pending["state"], pending["result"]) == ("pending", None)

    whatif_task_run(task_id=task.pk)
    done = operator.get(response["Location"]).json()
    assert done["state"] == "succeeded" and done["finished_at"]
    assert same_answer(done["result"], run_whatif(cluster=trio, pod=manifest(), replicas=4))
    assert done["comparison"] is None and done["error"] is None


def test_comparing_schedulers_runs_in_the_background(
    operator: APIClient, trio: Cluster, django_capture_on_commit_callbacks: Any
) -> None:
    with django_capture_on_commit_callbacks(execute=False):
        response = post(operator, {"pod": manifest(), "scheduler": "all"})
    assert response.status_code == 202
    whatif_task_run(task_id=WhatIfTask.objects.get().pk)
    done = operator.get(response["Location"]).json()
    assert done["result"] is None
    assert set(done["comparison"]) == {"scheduler-plugins", "crane", "koordinator", "default"}
    assert done["comparison"]["crane"]["scheduler"] == "crane"


def test_a_task_runs_once(
    operator: APIClient, trio: Cluster, django_capture_on_commit_callbacks: Any
) -> None:
    with django_capture_on_commit_callbacks(execute=False):
        post(operator, {"pod": manifest(), "scheduler": "all"})
    task = WhatIfTask.objects.get()
    first = whatif_task_run(task_id=task.pk)
    again = whatif_task_run(task_id=task.pk)
    assert first.finished_at == again.finished_at


def test_a_failed_task_keeps_the_error_shape(trio: Cluster, user_for: Any) -> None:
    task = WhatIfTask.objects.create(
        user=user_for("operator"),
        cluster=trio,
        request={
            "pod": {"kind": "Service"},
            "replicas": 1,
            "scheduler": "auto",
            "scoring": None,
            "weights": None,
        },
    )
    failed = whatif_task_run(task_id=task.pk)
    assert failed.state == TaskState.FAILED
    assert failed.error["detail"] == "Invalid input." and "pod" in failed.error["errors"]


def test_capacity_false_answers_the_same_verdicts_without_counting(
    operator: APIClient, trio: Cluster
) -> None:
    counted = post(operator, {"pod": manifest(), "replicas": 2}).json()
    skipped = post(operator, {"pod": manifest(), "replicas": 2, "capacity": False})
    assert skipped.status_code == 200, skipped.content
    body = skipped.json()
    assert body["capacity"] is None  # not a zero, which would read as "nothing more fits"
    assert counted["capacity"]["total"] > 0
    assert same_answer({**body, "capacity": counted["capacity"]}, counted)


def test_whether_capacity_is_counted_is_part_of_the_remembered_question(
    operator: APIClient, trio: Cluster, settings: Any
) -> None:
    settings.WHATIF_SNAPSHOT_CACHE_SIZE = 2
    skipped = post(operator, {"pod": manifest(), "capacity": False}).json()
    counted = post(operator, {"pod": manifest()}).json()
    skipped_again = post(operator, {"pod": manifest(), "capacity": False}).json()
    assert skipped["capacity"] is None and skipped_again["capacity"] is None
    assert counted["capacity"] is not None and counted["capacity"]["total"] > 0


@override_settings(API_WHATIF_SYNC_MAX_REPLICAS=3)
def test_a_background_question_keeps_capacity_false(
    operator: APIClient, trio: Cluster, django_capture_on_commit_callbacks: Any
) -> None:
    with django_capture_on_commit_callbacks(execute=False):
        body = {"pod": manifest(scheduler_name=TOPO_AWARE), "replicas": 4, "capacity": False}
        response = post(operator, body)
    assert response.status_code == 202, response.content
    whatif_task_run(task_id=WhatIfTask.objects.get().pk)
    done = operator.get(response["Location"]).json()
    assert done["state"] == "succeeded", done
    assert done["result"]["capacity"] is None
    assert len(done["result"]["placements"]) == 4


def test_a_task_stored_before_capacity_was_asked_counts_it(trio: Cluster, user_for: Any) -> None:
    """Rows written by an earlier release have no `capacity` key: they count, as then."""
    task = WhatIfTask.objects.create(
        user=user_for("operator"),
        cluster=trio,
        request={
            "pod": manifest(),
            "replicas": 1,
            "scheduler": "auto",
            "scoring": None,
            "weights": None,
            "use_draft_policies": False,
        },
    )
    done = whatif_task_run(task_id=task.pk)
    assert done.state == TaskState.SUCCEEDED, done.error
    assert done.result["capacity"]["total"] > 0


@pytest.mark.parametrize("value", ["maybe", 2, None, [True]])
def test_capacity_must_be_a_boolean(operator: APIClient, trio: Cluster, value: Any) -> None:
    response = post(operator, {"pod": manifest(), "capacity": value})
    assert response.status_code == 400, response.content
    assert "capacity" in response.json()["errors"]


def test_a_comparison_keeps_capacity_false_for_every_scheduler(
    operator: APIClient, trio: Cluster, django_capture_on_commit_callbacks: Any
) -> None:
    with django_capture_on_commit_callbacks(execute=False):
        response = post(operator, {"pod": manifest(), "scheduler": "all", "capacity": False})
    assert response.status_code == 202, response.content
    whatif_task_run(task_id=WhatIfTask.objects.get().pk)
    done = operator.get(response["Location"]).json()
    assert done["state"] == "succeeded", done
    assert {name: answer["capacity"] for name, answer in done["comparison"].items()} == {
        "scheduler-plugins": None,
        "crane": None,
        "koordinator": None,
        "default": None,
    }


def test_a_pod_with_pod_level_resources_is_judged_and_says_how_each_system_read_them(
    operator: APIClient, trio: Cluster
) -> None:
    """The containers ask 1 CPU, the pod 4096: the systems that read spec.resources
    (scheduler-plugins' and koord-scheduler's NodeResourcesFit) refuse every node for
    cpu; crane-scheduler, built on k8s.io/api v0.23, never sees them."""
    body = manifest(cpu="1", memory="1Gi")
    body["spec"]["resources"] = {"requests": {"cpu": "4096"}}
    response = post(operator, {"pod": body})
    assert response.status_code == 200, response.content
    answer = response.json()
    rules = answer["judged_by"]["pod_level_resources"]
    assert len(rules) == len(answer["groups"]) == 3
    assert any("ignored" in rule and "(crane, built on Kubernetes 1.23)" in rule for rule in rules)
    assert any("read as the pod's requests" in rule and "koordinator" in rule for rule in rules)
    short_of_cpu = {
        node["system"]: any("cpu" in reason for reason in node["reasons"])
        for node in answer["nodes"]
    }
    assert short_of_cpu == {"scheduler-plugins": True, "koordinator": True, "crane": False}


def test_a_pod_without_pod_level_resources_gets_no_such_statement(
    operator: APIClient, trio: Cluster
) -> None:
    answer = post(operator, {"pod": manifest()}).json()
    assert answer["judged_by"]["pod_level_resources"] == []
