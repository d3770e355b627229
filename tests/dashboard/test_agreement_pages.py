"""The Agreement page and a pod's audit page (issue 32), through Django's test client on
the real database: who may read them, the filters in the URL, a pod the audit lacks."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import Group
from django.test import Client

from topology.demo import generate_demo_objects
from topology.models import Cluster, PodAgreement, TrackedPrediction
from topology.services.diagnosis.refresh import refresh_diagnoses
from topology.services.mirror.importer import import_objects

pytestmark = pytest.mark.django_db


@pytest.fixture
def audited() -> Cluster:
    summary = import_objects(cluster_name="audited", objects=generate_demo_objects(nodes=6))
    assert summary.ok, summary.errors
    cluster = Cluster.objects.get(name="audited")
    refresh_diagnoses(cluster)
    return cluster


def client_of(django_user_model, group: str | None) -> Client:
    user = django_user_model.objects.create_user(f"u-{group}", password=None)
    if group:
        user.groups.add(Group.objects.get(name=group))
    client = Client()
    client.force_login(user)
    return client


def test_the_viewer_reads_the_page_and_a_role_less_user_does_not(
    audited: Cluster, django_user_model
) -> None:
    viewer = client_of(django_user_model, "viewer")
    page = viewer.get("/c/audited/agreement/")
    assert page.status_code == 200
    assert b"What a disagreement means" in page.content and b"koordinator" in page.content
    assert client_of(django_user_model, None).get("/c/audited/agreement/").status_code == 403


def test_the_pods_filter_in_the_url(audited: Cluster, django_user_model) -> None:
    viewer = client_of(django_user_model, "viewer")
    page = viewer.get("/c/audited/agreement/?verdict=agree&system=crane")
    rows = list(page.context["page"].object_list)
    assert rows and all(r.verdict == "agree" and r.system == "crane" for r in rows)


def test_a_pods_page_draws_both_placements(audited: Cluster, django_user_model) -> None:
    viewer = client_of(django_user_model, "viewer")
    row = PodAgreement.objects.filter(cluster=audited, system="koordinator").first()
    assert row is not None
    page = viewer.get(f"/c/audited/agreement/{row.namespace}/{row.name}/")
    assert page.status_code == 200
    figures = page.context["figures"]
    assert set(figures) == {"real-map", "engine-map"}
    real = figures["real-map"].layout.meta["highlighted"]
    assert real == sorted(row.body["real"]["cpuset"] or real)
    assert viewer.get("/c/audited/agreement/nope/nothing/").status_code == 404


TRACKED_QUERY = (
    "c1-name=app&c1-cpu_request=2&c1-cpu_limit=2&c1-memory_request=1Gi&c1-memory_limit=1Gi"
    "&name=tracked-app&namespace=team"
)


def test_the_whatif_page_tracks_its_prediction_and_the_agreement_page_lists_it(
    audited: Cluster, django_user_model
) -> None:
    operator = client_of(django_user_model, "operator")
    page = operator.get(f"/c/audited/whatif/?{TRACKED_QUERY}")
    assert b'id="track-button"' in page.content
    assert page.context["question_query"] in page.content.decode().replace("&amp;", "&")
    response = operator.post("/c/audited/whatif/track/", {"query": TRACKED_QUERY}, follow=True)
    row = TrackedPrediction.objects.get()
    assert (row.source, row.namespace, row.name) == ("dashboard", "team", "tracked-app")
    assert response.redirect_chain[-1][0] == f"/c/audited/whatif/?{TRACKED_QUERY}"
    assert f"Prediction {row.pk} is tracked" in response.content.decode()
    listing = operator.get("/c/audited/agreement/")
    (shown,) = listing.context["predictions"]
    assert shown.row == row and shown.predicted, shown
    assert b"No prediction settled yet." in listing.content


def test_a_bad_question_tracks_nothing(audited: Cluster, django_user_model) -> None:
    operator = client_of(django_user_model, "operator")
    response = operator.post("/c/audited/whatif/track/", {"query": "c1-cpu_request=abc"})
    assert response.status_code == 302 and not TrackedPrediction.objects.exists()
    assert operator.get("/c/audited/whatif/track/").status_code == 405
