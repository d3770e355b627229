"""API tokens: hashed at rest, shown once, optional expiry, revocable; admin creates them."""

from __future__ import annotations

import re
from datetime import timedelta

import pytest
from django.contrib.auth.models import User
from django.test import Client
from django.utils import timezone
from rest_framework.test import APIClient

from scheduler_api.models import APIToken
from scheduler_api.services.tokens import TokenRefused, api_token_create, api_token_revoke
from topology.models import Cluster

pytestmark = pytest.mark.django_db
CLUSTERS = "/api/v1/clusters"


def bearer(token: str) -> APIClient:
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {token}")
    return client


def test_a_token_authenticates_as_its_user(user_for, cluster: Cluster) -> None:
    issued = api_token_create(user=user_for("viewer"), name="ci")
    response = bearer(issued.plaintext).get(CLUSTERS)
    assert response.status_code == 200
    assert [c["name"] for c in response.json()["results"]] == ["prod"]


def test_only_a_digest_is_stored(user_for) -> None:
    issued = api_token_create(user=user_for("viewer"), name="ci")
    row = APIToken.objects.values().get()
    assert issued.plaintext.startswith("tl_") and len(issued.plaintext) > 40
    assert not any(issued.plaintext in str(value) for value in row.values())
    assert row["digest"] == APIToken.digest_of(issued.plaintext)
    assert issued.plaintext.startswith(row["prefix"])


def test_the_role_of_the_tokens_user_applies(user_for, cluster: Cluster) -> None:
    issued = api_token_create(user=user_for("outsider"), name="ci")
    assert bearer(issued.plaintext).get(CLUSTERS).status_code == 403


def test_an_expired_token_is_refused(user_for, cluster: Cluster) -> None:
    past = timezone.now() - timedelta(seconds=1)
    issued = api_token_create(user=user_for("viewer"), name="ci", expires_at=past)
    response = bearer(issued.plaintext).get(CLUSTERS)
    assert response.status_code == 401
    assert response.json() == {"detail": "This token has expired.", "errors": {}}


def test_a_token_works_until_it_expires(user_for, cluster: Cluster) -> None:
    future = timezone.now() + timedelta(days=1)
    issued = api_token_create(user=user_for("viewer"), name="ci", expires_at=future)
    assert bearer(issued.plaintext).get(CLUSTERS).status_code == 200


def test_a_revoked_token_is_refused(user_for, cluster: Cluster) -> None:
    issued = api_token_create(user=user_for("viewer"), name="ci")
    api_token_revoke(token=issued.token)
    response = bearer(issued.plaintext).get(CLUSTERS)
    assert response.status_code == 401
    assert response.json()["detail"] == "This token has been revoked."


def test_an_unknown_or_malformed_token_is_refused(cluster: Cluster) -> None:
    assert bearer("tl_nope").get(CLUSTERS).status_code == 401
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION="Bearer two words")
    assert client.get(CLUSTERS).status_code == 401


def test_the_token_of_an_inactive_user_is_refused(user_for, cluster: Cluster) -> None:
    user = user_for("viewer")
    issued = api_token_create(user=user, name="ci")
    User.objects.filter(pk=user.pk).update(is_active=False)
    assert bearer(issued.plaintext).get(CLUSTERS).status_code == 401


def test_use_is_recorded_at_most_once_a_minute(user_for, cluster: Cluster) -> None:
    issued = api_token_create(user=user_for("viewer"), name="ci")
    client = bearer(issued.plaintext)
    client.get(CLUSTERS)
    first = APIToken.objects.get().last_used_at
    client.get(CLUSTERS)
    assert first is not None and APIToken.objects.get().last_used_at == first


def test_unsafe_methods_need_no_csrf_token_with_a_bearer_token(user_for) -> None:
    user = user_for("admin")
    issued = api_token_create(user=user, name="ci")
    client = APIClient(enforce_csrf_checks=True)
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {issued.plaintext}")
    assert client.post(CLUSTERS, {"name": "edge"}, format="json").status_code == 201


@pytest.fixture
def staff_admin(user_for) -> Client:
    user = user_for("admin")
    user.is_staff = True
    user.save()
    client = Client()
    client.force_login(user)
    return client


def test_an_admin_creates_a_token_in_admin_and_sees_it_once(staff_admin: Client, user_for) -> None:
    owner = user_for("admin")  # their own: only a superuser issues tokens for others
    assert staff_admin.get("/admin/scheduler_api/apitoken/add/").status_code == 200
    response = staff_admin.post(
        "/admin/scheduler_api/apitoken/add/", {"user": owner.pk, "name": "ci pipeline"}
    )
    assert response.status_code == 200
    shown = re.search(r"tl_[A-Za-z0-9_-]{40,}", response.content.decode())
    assert shown, response.content.decode()[:2000]
    token = APIToken.objects.get()
    assert (token.user, token.name) == (owner, "ci pipeline")
    assert token.digest == APIToken.digest_of(shown.group(0))
    listing = staff_admin.get("/admin/scheduler_api/apitoken/").content.decode()
    detail = staff_admin.get(f"/admin/scheduler_api/apitoken/{token.pk}/change/").content.decode()
    assert shown.group(0) not in listing and shown.group(0) not in detail
    assert bearer(shown.group(0)).get(CLUSTERS).status_code == 200


def test_an_admin_revokes_tokens_in_admin(staff_admin: Client, user_for) -> None:
    issued = api_token_create(user=user_for("viewer"), name="ci")
    response = staff_admin.post(
        "/admin/scheduler_api/apitoken/",
        {"action": "revoke_tokens", "_selected_action": [issued.token.pk]},
    )
    assert response.status_code == 302
    assert APIToken.objects.get().is_revoked
    assert bearer(issued.plaintext).get(CLUSTERS).status_code == 401


def test_a_viewer_cannot_reach_tokens_in_admin(user_for) -> None:
    user = user_for("viewer")
    user.is_staff = True
    user.save()
    client = Client()
    client.force_login(user)
    assert client.get("/admin/scheduler_api/apitoken/").status_code == 403


def test_an_admin_cannot_create_a_token_for_someone_else(
    staff_admin: Client, user_for, django_user_model
) -> None:
    """Issue 28: an `admin` created a token for a superuser (ids are sequential), then read
    the victim's task results and wrote applies the audit blamed on the victim."""
    victim = django_user_model.objects.create_superuser("root", password=None)
    response = staff_admin.post(
        "/admin/scheduler_api/apitoken/add/", {"user": victim.pk, "name": "mine now"}
    )
    assert response.status_code == 200 and "Select a valid choice" in response.content.decode()
    assert not APIToken.objects.exists()
    with pytest.raises(TokenRefused):
        api_token_create(user=victim, name="x", issued_by=user_for("admin"))
    assert not APIToken.objects.exists()


def test_a_superuser_issues_a_token_for_a_dedicated_user(user_for, django_user_model) -> None:
    root = django_user_model.objects.create_superuser("root", password=None)
    client = Client()
    client.force_login(root)
    scraper = user_for("viewer")
    response = client.post(
        "/admin/scheduler_api/apitoken/add/", {"user": scraper.pk, "name": "prometheus"}
    )
    assert response.status_code == 200
    assert APIToken.objects.get().user == scraper
