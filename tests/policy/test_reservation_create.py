"""Reserve what the what-if found: the Reservation sent to the fake API server (through the
API and the real client), its place in the mirror at once and after a resync, and the
ways a create is refused or meets a conflict."""

from __future__ import annotations

import copy
from datetime import UTC, datetime, timedelta, timezone

import pytest
from rest_framework.test import APIClient

from tests.policy.writeback_support import KOORD_NODE, writes
from tests.sync.conftest import sync_once
from topology.choices import ApplyStatus, ReservationPhase, WriteKind
from topology.editing.reservation import (
    ReservationInputError,
    ReservationRequest,
    build_reservation,
)
from topology.models import ApplyRecord, Reservation
from topology.services.policies.writeback import run_apply
from topology.services.whatif.service import run_whatif

pytestmark = pytest.mark.django_db
pytest_plugins = ["tests.policy.writeback_fixtures"]
RESERVATIONS = "/api/v1/clusters/live/reservations"
RESERVATION_GROUP = ("scheduling.koordinator.sh", "reservations")
CONTAINER = {
    "name": "db",
    "requests": {"cpu": "4", "memory": "8Gi"},
    "limits": {"cpu": "4", "memory": "8Gi"},
}
QUESTION = {
    "containers": [CONTAINER],
    "name": "db",
    "namespace": "team-db",
    "koordinator_qos_class": "LSR",
    "node": KOORD_NODE,
    "owners": [
        {"labelSelector": {"matchLabels": {"app": "db"}}},
        {"object": {"kind": "StatefulSet", "namespace": "team-db", "name": "db"}},
    ],
    "ttl": "2h",
    "allocate_once": False,
}
EXPECTED = {
    "apiVersion": "scheduling.koordinator.sh/v1alpha1",
    "kind": "Reservation",
    "metadata": {
        "name": f"db-{KOORD_NODE}",
        "labels": {"app.kubernetes.io/managed-by": "topolens"},
    },
    "spec": {
        "template": {
            "metadata": {"namespace": "team-db", "labels": {"koordinator.sh/qosClass": "LSR"}},
            "spec": {
                "schedulerName": "koord-scheduler",
                "containers": [
                    {
                        "name": "db",
                        "resources": {
                            "requests": {"cpu": "4", "memory": "8Gi"},
                            "limits": {"cpu": "4", "memory": "8Gi"},
                        },
                    }
                ],
                "nodeName": KOORD_NODE,
            },
        },
        "owners": QUESTION["owners"],
        "ttl": "2h",
        "allocateOnce": False,
    },
}


@pytest.fixture
def admin_api(admin_user) -> APIClient:
    client = APIClient()
    client.force_login(admin_user)
    return client


def create(client: APIClient, **changes) -> tuple[int, dict, ApplyRecord | None]:
    """POST the question; for a 202, run the queued task as the worker would."""
    response = client.post(RESERVATIONS, {**QUESTION, **changes}, format="json")
    record = None
    if response.status_code in (202, 400) and response.has_header("Location"):
        record = ApplyRecord.objects.get(pk=response.json().get("id") or _id(response))
        if response.status_code == 202:
            record = run_apply(record_id=record.pk)
    return response.status_code, response.json(), record


def _id(response) -> int:
    return int(response["Location"].rstrip("/").rsplit("/", 1)[1])


def test_the_server_receives_the_reservation_pinned_to_the_node_with_owners_and_ttl(
    fake, synced, admin_api
):
    status, body, record = create(admin_api)
    assert status == 202, body
    assert body["status"] == "pending" and body["kind"] == WriteKind.RESERVATION
    (sent,) = writes(fake, "POST")
    assert sent == EXPECTED
    assert fake.requests_matching("POST", "/apis/scheduling.koordinator.sh/v1alpha1/reservations")
    assert record.status == ApplyStatus.APPLIED, record.message
    assert record.patch == EXPECTED and record.resource_version_before == ""
    stored = fake.cluster.get(RESERVATION_GROUP, ("", f"db-{KOORD_NODE}"))
    assert record.resource_version_after == stored["metadata"]["resourceVersion"]


def test_the_preview_is_exactly_what_a_create_sends_and_writes_nothing(fake, synced, admin_api):
    preview = admin_api.post(RESERVATIONS, {**QUESTION, "preview": True}, format="json")
    assert preview.status_code == 200, preview.content
    assert preview.json()["reservation"] == EXPECTED
    assert preview.json()["node"] == KOORD_NODE and preview.json()["refusals"] == []
    assert writes(fake, "POST") == [] and not ApplyRecord.objects.exists()
    create(admin_api)
    assert writes(fake, "POST") == [preview.json()["reservation"]]


def test_finding_the_node_reads_verdicts_without_counting_capacity(
    fake, synced, admin_api, monkeypatch
):
    from topology.services.policies.writeback import reservations

    asked: list = []
    real = reservations.ask
    monkeypatch.setattr(
        reservations,
        "ask",
        lambda cluster, question: asked.append(question) or real(cluster, question),
    )
    preview = admin_api.post(
        RESERVATIONS, {**QUESTION, "node": "best", "preview": True}, format="json"
    )
    assert preview.status_code == 200, preview.content
    assert [question.capacity for question in asked] == [False]
    assert preview.json()["node"] == KOORD_NODE


def test_the_reservation_is_in_the_mirror_at_once_and_after_a_resync(fake, synced, admin_api, fast):
    create(admin_api)
    mirrored = Reservation.objects.get(cluster=synced, name=f"db-{KOORD_NODE}")
    assert (mirrored.node_name, mirrored.node.name) == (KOORD_NODE, KOORD_NODE)
    assert mirrored.phase == ReservationPhase.PENDING  # koord-scheduler has not seen it yet
    mirrored.delete()
    sync_once(synced, fast)  # the sync lists it from the cluster like any other
    resynced = Reservation.objects.get(cluster=synced, name=f"db-{KOORD_NODE}")
    assert resynced.node_name == KOORD_NODE
    assert resynced.template_namespace == "team-db"
    assert resynced.owners == QUESTION["owners"]
    assert resynced.ttl_seconds == 7200 and resynced.allocate_once is False
    assert [c["name"] for c in resynced.containers] == ["db"]


def test_best_takes_the_top_ranked_node_the_pod_fits_as_koord_scheduler_judges(
    fake, synced, admin_api
):
    answer = run_whatif(
        cluster=synced,
        pod={
            "metadata": {"name": "db", "namespace": "team-db"},
            "spec": {
                "containers": [
                    {
                        "name": "db",
                        "resources": {
                            "requests": CONTAINER["requests"],
                            "limits": CONTAINER["limits"],
                        },
                    }
                ]
            },
        },
        replicas=0,
        scheduler="koordinator",
    )
    best = next(v["node"] for v in answer["nodes"] if v["fits"])
    question = {k: v for k, v in QUESTION.items() if k != "koordinator_qos_class"}
    response = admin_api.post(RESERVATIONS, {**question, "node": "best"}, format="json")
    assert response.status_code == 202, response.content
    run_apply(record_id=response.json()["id"])
    (sent,) = writes(fake, "POST")
    assert sent["spec"]["template"]["spec"]["nodeName"] == best
    assert sent["metadata"]["name"] == f"db-{best}"


def test_a_name_taken_in_the_cluster_meets_a_conflict_and_nothing_is_overwritten(
    fake, synced, admin_api
):
    theirs = copy.deepcopy(next(iter(fake.cluster.objects[RESERVATION_GROUP].values())))
    theirs["metadata"] = {"name": "taken"}
    fake.cluster.put(theirs)  # made in the cluster after the last sync: not in the mirror
    before = fake.cluster.get(RESERVATION_GROUP, ("", "taken"))
    status, body, record = create(admin_api, reservation_name="taken")
    assert status == 202, body
    assert record.status == ApplyStatus.CONFLICT and "already exists" in record.message
    assert fake.cluster.get(RESERVATION_GROUP, ("", "taken")) == before
    assert record.cluster_version["spec"] == before["spec"]  # theirs
    assert record.patch["metadata"]["name"] == "taken"  # ours
    assert Reservation.objects.filter(cluster=synced, name="taken").exists()  # re-synced


def test_a_name_already_mirrored_is_refused_before_anything_is_sent(fake, synced, admin_api):
    existing = Reservation.objects.filter(cluster=synced).first().name
    status, body, record = create(admin_api, reservation_name=existing)
    assert status == 400 and "name" in body["errors"]
    assert record.status == ApplyStatus.ERROR and record.message.startswith("Refused")
    assert writes(fake, "POST") == []


@pytest.mark.parametrize(
    ("changes", "field"),
    [
        ({"owners": []}, "owners"),
        ({"owners": [{"labelSelector": {}}]}, "owners.0.labelSelector"),
        ({"ttl": "forever"}, "ttl"),
        ({"expires": "2099-01-01T00:00:00Z"}, "expires"),  # with ttl: one or the other
        ({"node": "no-such-node"}, "node"),
        ({"reservation_name": "Not_A_Name"}, "name"),
    ],
)
def test_a_request_that_cannot_become_a_reservation_is_a_400_naming_the_field(
    fake, synced, admin_api, changes, field
):
    response = admin_api.post(RESERVATIONS, {**QUESTION, **changes}, format="json")
    assert response.status_code == 400, response.content
    assert field in response.json()["errors"], response.json()
    assert writes(fake, "POST") == [] and not ApplyRecord.objects.exists()


# The builder alone -----------------------------------------------------------------------


NOW = datetime(2030, 1, 1, tzinfo=UTC)
POD = {"metadata": {"name": "web", "namespace": "team-web"}, "spec": {"containers": [
    {"name": "web", "image": "nginx", "command": ["nginx"], "resources": {"requests": {"cpu": "1"}}}
]}}  # fmt: skip


def build(**changes) -> dict:
    fields = {"pod": POD, "node": "n1", "owners": [{"object": {"name": "web-0"}}], **changes}
    return build_reservation(ReservationRequest(**fields), node=fields["node"], now=NOW)


def test_expires_is_written_in_utc_and_replaces_the_ttl() -> None:
    later = datetime(2030, 1, 2, 9, 30, tzinfo=timezone(timedelta(hours=2)))
    spec = build(expires=later)["spec"]
    assert spec["expires"] == "2030-01-02T07:30:00Z" and "ttl" not in spec


def test_the_template_keeps_what_placement_needs_and_drops_the_rest() -> None:
    template = build()["spec"]["template"]
    assert template["spec"]["containers"] == [
        {"name": "web", "image": "nginx", "resources": {"requests": {"cpu": "1"}}}
    ]
    assert template["spec"]["nodeName"] == "n1"
    assert template["spec"]["schedulerName"] == "koord-scheduler"


@pytest.mark.parametrize(
    ("changes", "field"),
    [
        ({"expires": datetime(2029, 1, 1, tzinfo=UTC)}, "expires"),  # in the past
        ({"expires": datetime(2031, 1, 1)}, "expires"),  # no time zone
        ({"owners": [{"labelSelector": {"matchExpressions": [{"key": "a", "operator": "In"}]}}]},
         "owners.0.labelSelector.matchExpressions.0"),
        ({"owners": [{"controller": {"name": "x"}}]}, "owners.0"),
        ({"pod": {"spec": {"containers": []}}}, "pod.spec.containers"),
    ],
)  # fmt: skip
def test_the_builder_names_every_field_at_fault(changes, field) -> None:
    with pytest.raises(ReservationInputError) as caught:
        build(**changes)
    assert field in caught.value.field_errors, caught.value.field_errors
