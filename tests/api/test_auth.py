"""Roles as groups (from the data migration), 401 vs 403, and CSRF with a browser session."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import Group, User
from rest_framework.test import APIClient

from topology.models import Cluster

from .conftest import ROLES

pytestmark = pytest.mark.django_db


def permissions_of(role: str) -> set[str]:
    group = Group.objects.get(name=role)
    return {f"{p.content_type.app_label}.{p.codename}" for p in group.permissions.all()}


def test_the_migration_creates_the_three_roles() -> None:
    assert set(Group.objects.filter(name__in=ROLES).values_list("name", flat=True)) == set(ROLES)


def test_a_viewer_reads_everything_but_credentials() -> None:
    viewer = permissions_of("viewer")
    assert {"topology.view_node", "topology.view_pod", "topology.view_syncstate"} <= viewer
    assert all(p.split(".")[1].startswith("view_") for p in viewer)
    assert "topology.view_clusterconnection" not in viewer
    assert "scheduler_api.view_apitoken" not in viewer


def test_each_role_adds_to_the_one_below() -> None:
    viewer, operator, admin = (permissions_of(role) for role in ROLES)
    assert viewer < operator < admin
    assert operator - viewer == {
        "scheduler_api.run_whatif",
        *(
            f"topology.{action}_{model}"
            for model in ("nodepolicy", "qosdraft", "referencepod")
            for action in ("add", "change", "delete")
        ),
    }
    assert {"topology.view_qosdraft", "topology.view_applyrecord"} <= viewer
    assert not {"topology.add_applyrecord", "topology.change_applyrecord"} & admin
    assert {
        "topology.apply_nodepolicy",
        "topology.add_cluster",
        "topology.delete_cluster",
        "topology.change_clusterconnection",
        "scheduler_api.add_apitoken",
    } <= admin - operator


def test_a_superuser_may_do_anything(cluster: Cluster) -> None:
    client = APIClient()
    client.force_login(User.objects.create_superuser("root", password=None))
    assert client.get("/api/v1/clusters").status_code == 200
    assert client.post("/api/v1/clusters", {"name": "x"}, format="json").status_code == 201


def test_an_inactive_session_user_is_anonymous(cluster: Cluster) -> None:
    user = User.objects.create_user("gone", password=None, is_active=False)
    client = APIClient()
    client.force_login(user)
    assert client.get("/api/v1/clusters").status_code == 401


@pytest.fixture
def csrf_admin(user_for) -> APIClient:
    client = APIClient(enforce_csrf_checks=True)
    client.force_login(user_for("admin"))
    return client


def test_a_session_needs_a_csrf_token_for_unsafe_methods(csrf_admin: APIClient) -> None:
    response = csrf_admin.post("/api/v1/clusters", {"name": "edge"}, format="json")
    assert response.status_code == 403
    assert "CSRF" in response.json()["detail"]
    assert not Cluster.objects.filter(name="edge").exists()


def test_a_session_with_the_csrf_token_may_write(csrf_admin: APIClient) -> None:
    csrf_admin.get("/admin/login/")  # sets the csrftoken cookie
    token = csrf_admin.cookies["csrftoken"].value
    response = csrf_admin.post(
        "/api/v1/clusters", {"name": "edge"}, format="json", HTTP_X_CSRFTOKEN=token
    )
    assert response.status_code == 201, response.content


def test_safe_methods_need_no_csrf_token(csrf_admin: APIClient, cluster: Cluster) -> None:
    assert csrf_admin.get("/api/v1/clusters").status_code == 200
