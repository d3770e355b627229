"""`page` and `page_size` are whole numbers ≥ 1 or a 400 naming them, as the schema says
(issue 28: `page_size=null` was accepted, `page=-3` was a 404)."""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.django_db
NODES = "/api/v1/clusters/trio/nodes"


@pytest.mark.parametrize(
    ("query", "field"),
    [
        ("page_size=null", "page_size"),
        ("page_size=0", "page_size"),
        ("page=-3", "page"),
        ("page=abc", "page"),
        ("page_size=٣", "page_size"),
    ],  # fmt: skip
)
def test_a_malformed_page_parameter_is_a_400_naming_it(client_for, trio, query, field) -> None:
    response = client_for("viewer").get(f"{NODES}?{query}")
    assert response.status_code == 400
    assert field in response.json()["errors"]


def test_valid_pages_still_work(client_for, trio) -> None:
    viewer = client_for("viewer")
    assert viewer.get(f"{NODES}?page=1&page_size=2").status_code == 200
    assert viewer.get(f"{NODES}?page=last&page_size=2").status_code == 200
    assert viewer.get(f"{NODES}?page=99").status_code == 404  # past the last: documented
    assert viewer.get(f"{NODES}?page_size=100000").status_code == 200  # capped


def test_a_boolean_filter_takes_true_or_false_only(client_for, trio) -> None:
    viewer = client_for("viewer")
    response = viewer.get("/api/v1/clusters/trio/pods?has_exclusive_cpus=__main__")
    assert response.status_code == 400 and "has_exclusive_cpus" in response.json()["errors"]
    every = viewer.get("/api/v1/clusters/trio/pods").json()["count"]
    pinned = viewer.get("/api/v1/clusters/trio/pods?has_exclusive_cpus=true").json()["count"]
    loose = viewer.get("/api/v1/clusters/trio/pods?has_exclusive_cpus=false").json()["count"]
    assert pinned + loose == every


@pytest.mark.parametrize("persona", ["admin", "viewer", "outsider"])
def test_put_on_a_cluster_is_a_405_for_everyone(client_for, trio, persona) -> None:
    response = client_for(persona).put("/api/v1/clusters/trio", {}, format="json")
    assert response.status_code == 405


def test_an_invalid_label_selector_is_a_400_as_on_the_page(client_for, trio) -> None:
    response = client_for("viewer").get("/api/v1/clusters/trio/nodes?label=pool=a,=foo")
    assert response.status_code == 400 and "label" in response.json()["errors"]
    assert (
        client_for("viewer").get("/api/v1/clusters/trio/nodes?label=pool=a,zone").status_code == 200
    )


def test_a_label_selector_with_a_percent_sign_is_a_400_not_a_500(client_for, trio) -> None:
    """Found by schemathesis: django-filter formats messages with `%`, so user text in
    them broke the error handler."""
    response = client_for("admin").get("/api/v1/clusters/trio/nodes?label=l%01%25a%28")
    assert response.status_code == 400 and "label" in response.json()["errors"]
