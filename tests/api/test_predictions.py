"""Tracked what-if predictions on the real database (issue 32): a what-if asked with
`track: true` is stored; a pod of the same owner, name or generateName that lands
afterwards is compared with it at the next refresh (after a sync), and the prediction
held, missed, was overtaken by a changed cluster, or expired. The API lists them to the
viewer role; the dashboard tracks one from the what-if page."""

from __future__ import annotations

import copy
import json
from datetime import timedelta
from typing import Any

import pytest
from django.utils import timezone
from rest_framework.test import APIClient

from scheduler_api.models import WhatIfTask
from scheduler_api.services.whatif_tasks import whatif_task_run
from topology.demo import generate_demo_objects
from topology.models import Cluster, PredictionStatus, TrackedPrediction
from topology.services.audit.predictions import follow_predictions, prune_predictions
from topology.services.diagnosis.mirror import facts_from_mirror
from topology.services.diagnosis.refresh import refresh_diagnoses
from topology.services.mirror.importer import import_objects

pytestmark = pytest.mark.django_db
NAME = "tracked"
BASE = f"/api/v1/clusters/{NAME}"
RESOURCE_STATUS = "scheduling.koordinator.sh/resource-status"
Objects = list[dict[str, Any]]


@pytest.fixture(scope="module")
def objects() -> Objects:
    return generate_demo_objects(nodes=8, seed=5)


@pytest.fixture
def cluster(objects: Objects) -> Cluster:
    summary = import_objects(cluster_name=NAME, objects=objects)
    assert summary.ok, summary.errors
    return Cluster.objects.get(name=NAME)


def template(objects: Objects) -> dict[str, Any]:
    """A Koordinator pod of the demo (LSR, bound CPUs) as a what-if manifest."""
    pod = next(
        o for o in objects
        if o["kind"] == "Pod" and RESOURCE_STATUS in o["metadata"].get("annotations", {})
        and '"cpuset"' in o["metadata"]["annotations"][RESOURCE_STATUS]
    )  # fmt: skip
    manifest = copy.deepcopy(pod)
    manifest.pop("status", None)
    manifest["spec"].pop("nodeName", None)
    metadata = manifest["metadata"]
    for key in ("uid", "resourceVersion", "creationTimestamp", "ownerReferences"):
        metadata.pop(key, None)
    metadata["annotations"] = {
        k: v for k, v in metadata["annotations"].items() if k.endswith("resource-spec")
    }
    metadata["name"] = "track-me"
    return manifest


def ask(client: APIClient, manifest: dict[str, Any], **options: Any) -> dict[str, Any]:
    body = {"pod": manifest, "track": True, "capacity": False, **options}
    response = client.post(f"{BASE}/whatif", body, format="json")
    assert response.status_code == 200, response.content
    return response.json()


def landed(
    manifest: dict[str, Any], node: str, zones: list[int], cpuset: list[int], name: str = ""
) -> dict[str, Any]:
    """The manifest's pod as the cluster would show it once bound: on `node`, with
    koord-scheduler's resource-status naming `zones` and `cpuset`, created now."""
    pod = copy.deepcopy(manifest)
    now = timezone.now().strftime("%Y-%m-%dT%H:%M:%SZ")
    metadata = pod["metadata"]
    metadata.update(name=name or metadata["name"], uid=f"uid-{name or metadata['name']}",
                    creationTimestamp=now)  # fmt: skip
    status = {
        "cpuset": ",".join(map(str, cpuset)),
        "numaNodeResources": [{"node": z, "resources": {"cpu": "1"}} for z in zones],
    }
    metadata.setdefault("annotations", {})[RESOURCE_STATUS] = json.dumps(status)
    pod["spec"]["nodeName"] = node
    pod["status"] = {"phase": "Running", "qosClass": "Guaranteed"}
    return pod


def sync(objects: Objects, *extra: dict[str, Any]) -> None:
    """The mirror as after a sync that saw `extra` too, and the refresh that follows it."""
    summary = import_objects(cluster_name=NAME, objects=[*objects, *extra])
    assert summary.ok, summary.errors
    refresh_diagnoses(Cluster.objects.get(name=NAME))


def best_of(answer: dict[str, Any]) -> dict[str, Any]:
    (placement,) = answer["placements"]
    assert placement["system"] == "koordinator" and placement["cpuset"], answer["placements"]
    return placement


def test_a_tracked_answer_names_its_stored_prediction(
    cluster: Cluster, operator: APIClient, objects: Objects
) -> None:
    answer = ask(operator, template(objects))
    row = TrackedPrediction.objects.get()
    assert answer["tracked"]["id"] == row.pk and answer["tracked"]["matched_by"] == "track-me"
    assert answer["tracked"]["expires_at"].endswith("Z")
    best = best_of(answer)
    assert row.predicted == {"koordinator": [{k: best[k] for k in ("replica", "node",
                                              "numa_zones", "cpuset")}]}  # fmt: skip
    assert (row.status, row.namespace, row.source) == ("waiting", "team-web", "api")
    assert row.data_age_seconds == answer["data_age_seconds"]


def test_an_untracked_answer_stores_nothing(
    cluster: Cluster, operator: APIClient, objects: Objects
) -> None:
    response = operator.post(f"{BASE}/whatif", {"pod": template(objects)}, format="json")
    assert response.status_code == 200 and "tracked" not in response.json()
    assert not TrackedPrediction.objects.exists()


def test_a_pod_that_lands_where_predicted_holds(
    cluster: Cluster, operator: APIClient, objects: Objects
) -> None:
    manifest = template(objects)
    best = best_of(ask(operator, manifest))
    sync(objects, landed(manifest, best["node"], best["numa_zones"], best["cpuset"]))
    row = TrackedPrediction.objects.get()
    assert row.status == PredictionStatus.HELD, row.why
    (pod,) = row.landed
    assert pod["held"] and pod["differs"] == [] and pod["published"]
    assert (pod["node"], pod["cpuset"]) == (best["node"], best["cpuset"])
    assert row.why == "1 of 1 replicas landed, each where the prediction put one"


def test_a_pod_on_another_node_misses(
    cluster: Cluster, operator: APIClient, objects: Objects
) -> None:
    manifest = template(objects)
    best = best_of(ask(operator, manifest))
    other = next(
        o["metadata"]["name"] for o in objects
        if o["kind"] == "Node" and o["metadata"]["name"] != best["node"]
    )  # fmt: skip
    sync(objects, landed(manifest, other, [0], [0, 1]))
    row = TrackedPrediction.objects.get()
    assert row.status == PredictionStatus.MISSED
    assert row.landed[0]["differs"] == ["node"] and row.landed[0]["node"] == other
    assert row.why == "1 of 1 replicas landed; 1 not where the prediction put one"


def test_a_pod_on_other_cpus_misses_by_zones_and_cpuset(
    cluster: Cluster, operator: APIClient, objects: Objects
) -> None:
    manifest = template(objects)
    best = best_of(ask(operator, manifest))
    zone = next(z for z in range(8) if z not in best["numa_zones"])
    cpus = [c + 1000 for c in best["cpuset"]]
    sync(objects, landed(manifest, best["node"], [zone], cpus))
    (pod,) = TrackedPrediction.objects.get().landed
    assert pod["differs"] == ["zones", "cpuset"] and pod["predicted"]["node"] == best["node"]


def test_a_cluster_that_changed_meanwhile_is_not_counted(
    cluster: Cluster, operator: APIClient, objects: Objects
) -> None:
    manifest = template(objects)
    best = best_of(ask(operator, manifest))
    stranger = landed(manifest, best["node"], [0], [0], name="someone-else")
    stranger["metadata"]["labels"] = {}
    wrong = landed(manifest, "nowhere-near", [0], [0])
    sync(objects, wrong, stranger)
    row = TrackedPrediction.objects.get()
    assert row.status == PredictionStatus.CHANGED
    assert "not counted (it did not hold)" in row.why
    counts = operator.get(f"{BASE}/agreement").json()["predictions"]
    assert counts["changed"] == 1 and counts["missed"] == 0 and counts["held_rate"] is None


def test_pods_of_the_owner_match_and_older_replicas_do_not(
    cluster: Cluster, operator: APIClient, objects: Objects
) -> None:
    owner = {"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "web-42", "uid": "rs-42",
             "controller": True}  # fmt: skip
    manifest = template(objects)
    old = landed(manifest, "nowhere-near", [0], [0], name="web-42-old")
    old["metadata"]["ownerReferences"] = [owner]
    old["metadata"]["creationTimestamp"] = "2020-01-01T00:00:00Z"
    sync(objects, old)
    manifest["metadata"]["ownerReferences"] = [owner]
    best = best_of(ask(operator, manifest))
    assert TrackedPrediction.objects.get().matched_by == "ReplicaSet/web-42"
    new = landed(manifest, best["node"], best["numa_zones"], best["cpuset"], name="web-42-new")
    new["metadata"]["ownerReferences"] = [owner]
    sync(objects, old, new)
    row = TrackedPrediction.objects.get()
    assert [pod["name"] for pod in row.landed] == ["web-42-new"]
    assert row.status == PredictionStatus.HELD, row.why


def test_a_generate_name_matches_the_pods_it_names(
    cluster: Cluster, operator: APIClient, objects: Objects
) -> None:
    manifest = template(objects)
    del manifest["metadata"]["name"]
    manifest["metadata"]["generateName"] = "batch-"
    best = best_of(ask(operator, manifest))
    assert TrackedPrediction.objects.get().matched_by == "batch-*"
    sync(objects, landed(manifest, best["node"], best["numa_zones"], best["cpuset"],
                         name="batch-x7k2p"))  # fmt: skip
    assert TrackedPrediction.objects.get().status == PredictionStatus.HELD


def test_replicas_wait_for_each_pod_then_settle(
    cluster: Cluster, operator: APIClient, objects: Objects
) -> None:
    manifest = template(objects)
    del manifest["metadata"]["name"]
    manifest["metadata"]["generateName"] = "pair-"
    answer = ask(operator, manifest, replicas=2)
    first, second = answer["placements"]
    one = landed(manifest, first["node"], first["numa_zones"], first["cpuset"], name="pair-a")
    sync(objects, one)
    row = TrackedPrediction.objects.get()
    assert row.status == PredictionStatus.WAITING and len(row.landed) == 1
    two = landed(manifest, second["node"], second["numa_zones"], second["cpuset"], name="pair-b")
    sync(objects, one, two)
    row.refresh_from_db()
    assert row.status == PredictionStatus.HELD, row.why
    assert [p["predicted"]["replica"] for p in row.landed] == [0, 1]


def test_no_pod_within_the_window_expires(
    cluster: Cluster, operator: APIClient, objects: Objects
) -> None:
    ask(operator, template(objects))
    row = TrackedPrediction.objects.get()
    facts = facts_from_mirror(cluster)
    assert follow_predictions(cluster, facts).waiting == 1
    later = row.expires_at + timedelta(seconds=1)
    assert follow_predictions(cluster, facts, now=later).settled == 1
    row.refresh_from_db()
    assert row.status == PredictionStatus.EXPIRED and row.why.startswith("no pod of track-me")


def test_housekeeping_settles_overdue_predictions_and_prunes_old_ones(
    cluster: Cluster, operator: APIClient, objects: Objects
) -> None:
    ask(operator, template(objects))
    row = TrackedPrediction.objects.get()
    prune_predictions(now=row.expires_at + timedelta(seconds=1))
    row.refresh_from_db()
    assert row.status == PredictionStatus.EXPIRED
    assert prune_predictions(now=row.resolved_at + timedelta(days=29)) == 0
    assert prune_predictions(now=row.resolved_at + timedelta(days=31)) == 1


def test_a_tracked_question_in_the_background_is_stored_when_answered(
    cluster: Cluster, operator: APIClient, objects: Objects, django_capture_on_commit_callbacks: Any
) -> None:
    body = {"pod": template(objects), "track": True, "scheduler": "all"}
    with django_capture_on_commit_callbacks(execute=False):
        response = operator.post(f"{BASE}/whatif", body, format="json")
    assert response.status_code == 202, response.content
    assert not TrackedPrediction.objects.exists()
    whatif_task_run(task_id=WhatIfTask.objects.get().pk)
    done = operator.get(response["Location"]).json()
    row = TrackedPrediction.objects.get()
    assert done["tracked"]["id"] == row.pk and "tracked" not in done["comparison"]
    assert set(row.predicted) == {"scheduler-plugins", "crane", "koordinator", "default"}


def test_the_list_filters_by_status_and_one_prediction_is_served(
    cluster: Cluster, operator: APIClient, viewer: APIClient, objects: Objects
) -> None:
    manifest = template(objects)
    best = best_of(ask(operator, manifest))
    sync(objects, landed(manifest, best["node"], best["numa_zones"], best["cpuset"]))
    ask(operator, template(objects) | {"metadata": {"name": "later", "namespace": "x"}})
    listed = viewer.get(f"{BASE}/predictions").json()
    assert [p["status"] for p in listed["results"]] == ["waiting", "held"]
    held = viewer.get(f"{BASE}/predictions?status=held").json()["results"]
    assert len(held) == 1 and held[0]["landed"][0]["held"] is True
    one = viewer.get(f"{BASE}/predictions/{held[0]['id']}").json()
    assert one == held[0]
    assert viewer.get(f"{BASE}/predictions?status=maybe").status_code == 400
    assert viewer.get(f"{BASE}/predictions/999999").status_code == 404


@pytest.mark.parametrize(
    ("persona", "status"),
    [("anonymous", 401), ("outsider", 403), ("viewer", 200), ("operator", 200), ("admin", 200)],
)
def test_the_viewer_role_reads_predictions(
    cluster: Cluster, client_for: Any, persona: str, status: int
) -> None:
    assert client_for(persona).get(f"{BASE}/predictions").status_code == status


def test_the_viewer_role_cannot_track(
    cluster: Cluster, viewer: APIClient, objects: Objects
) -> None:
    body = {"pod": template(objects), "track": True}
    assert viewer.post(f"{BASE}/whatif", body, format="json").status_code == 403
    assert not TrackedPrediction.objects.exists()
