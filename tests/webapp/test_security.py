"""Issue 28 (11, 12): login brute force is stopped, production settings come from the
environment and pass `check --deploy`, every page carries a Content-Security-Policy, and
JSON answers are never cached."""

from __future__ import annotations

import os
import subprocess
import sys
from datetime import timedelta
from pathlib import Path

import pytest
from axes.models import AccessAttempt
from django.contrib.auth.models import Group
from django.test import Client, override_settings
from django.urls import reverse
from django.utils import timezone

ROOT = Path(__file__).resolve().parents[2]
PASSWORD = "right-pw-12345678"
PRODUCTION = {
    "DEBUG": "false",
    "HTTPS": "true",
    "TRUST_X_FORWARDED_PROTO": "true",
    "SECRET_KEY": "k" * 20 + "a-long-random-secret-for-the-deploy-check-0123456789",
    "ALLOWED_HOSTS": "topolens.example.com",
    "CSRF_TRUSTED_ORIGINS": "https://topolens.example.com",
}


@pytest.fixture
def viewer(django_user_model, role_groups):  # type: ignore[no-untyped-def]
    user = django_user_model.objects.create_user("vera", password=PASSWORD)
    user.groups.add(Group.objects.get(name="viewer"))
    return user


def log_in(client: Client, username: str, password: str, url: str = "") -> int:
    response = client.post(url or reverse("login"), {"username": username, "password": password})
    return int(response.status_code)


@pytest.mark.django_db
def test_after_five_wrong_passwords_even_the_right_one_is_refused_for_a_while(viewer):
    client = Client()
    assert [log_in(client, "vera", "guess") for _ in range(4)] == [200] * 4
    assert log_in(client, "vera", "guess") == 429  # the fifth locks the pair out
    locked = client.post(reverse("login"), {"username": "vera", "password": PASSWORD})
    assert locked.status_code == 429
    assert "Too many failed logins" in locked.content.decode()
    assert "_auth_user_id" not in client.session
    # the admin's login is the same door
    assert log_in(Client(), "vera", PASSWORD, reverse("admin:login")) == 429
    # once the cool-off has passed, the right password works (and resets the count)
    AccessAttempt.objects.update(attempt_time=timezone.now() - timedelta(minutes=16))
    assert log_in(client, "vera", PASSWORD) == 302
    assert not AccessAttempt.objects.exists()


@pytest.mark.django_db
def test_a_lockout_is_per_username_and_address_so_others_still_log_in(viewer, django_user_model):
    other = django_user_model.objects.create_user("otto", password=PASSWORD)
    other.groups.add(Group.objects.get(name="viewer"))
    for _ in range(5):
        log_in(Client(), "vera", "guess")
    assert log_in(Client(), "otto", PASSWORD) == 302
    elsewhere = Client(REMOTE_ADDR="10.9.8.7")
    assert log_in(elsewhere, "vera", PASSWORD) == 302


@pytest.mark.django_db
@override_settings(AXES_FAILURE_LIMIT=2)
def test_the_limit_is_a_setting(viewer):
    client = Client()
    assert [log_in(client, "vera", "guess") for _ in range(2)] == [200, 429]


def deploy_check(**environment: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "manage.py", "check", "--deploy", "--fail-level", "WARNING"],
        cwd=ROOT,
        env={**os.environ, **environment},
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_the_documented_production_settings_pass_the_deploy_check():
    result = deploy_check(**PRODUCTION)
    assert result.returncode == 0, result.stderr + result.stdout
    plain = deploy_check(**{**PRODUCTION, "HTTPS": "false"})
    assert plain.returncode != 0
    for warning in ("security.W004", "security.W008", "security.W012", "security.W016"):
        assert warning in plain.stderr + plain.stdout


def test_the_kubernetes_manifests_set_the_production_settings():
    import yaml

    config = yaml.safe_load((ROOT / "deploy/kubernetes/config.yaml").read_text())
    data = config["data"]
    assert data["HTTPS"] == "true" and data["TRUST_X_FORWARDED_PROTO"] == "true"
    assert data["CSRF_TRUSTED_ORIGINS"].startswith("https://")
    assert data["DEBUG"] == "false"


@pytest.mark.django_db
def test_every_page_has_a_content_security_policy_and_json_is_never_cached(viewer):
    client = Client()
    client.force_login(viewer)
    page = client.get(reverse("topology:home"))
    policy = page["Content-Security-Policy"]
    assert "default-src 'self'" in policy and "frame-ancestors 'none'" in policy
    assert "script-src 'self';" in policy + ";"  # no inline script on our pages
    docs = client.get("/api/schema/redoc/")
    assert "script-src 'self' 'unsafe-inline'" in docs["Content-Security-Policy"]
    answer = client.get("/api/v1/clusters")
    assert answer.status_code == 200
    assert "no-store" in answer["Cache-Control"] and "private" in answer["Cache-Control"]
    login = Client().get(reverse("login"))
    assert "Content-Security-Policy" in login


def test_the_image_leaves_local_state_and_secrets_out():
    """Issue 28: the Dockerfile copies the whole tree; var/ (the SQLite database and the
    generated secret key) went into the image."""
    ignored = {
        line.strip()
        for line in (ROOT / ".dockerignore").read_text().splitlines()
        if line.strip() and not line.startswith("#")
    }
    assert {"var", ".venv", ".git", "*.sqlite3", ".env"} <= ignored
