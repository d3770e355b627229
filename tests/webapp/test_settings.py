"""Settings helpers refuse bad values at start-up, naming the variable."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from django.core.exceptions import ImproperlyConfigured
from django.db import connection

from webapp import env

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize(
    ("raw", "value"), [("true", True), ("0", False), ("Yes", True), ("", False)]
)
def test_env_bool_reads_common_spellings(monkeypatch, raw, value):
    monkeypatch.setenv("X_FLAG", raw)
    assert env.env_bool("X_FLAG", not value) is value


def test_env_bool_refuses_nonsense(monkeypatch):
    monkeypatch.setenv("X_FLAG", "maybe")
    with pytest.raises(ImproperlyConfigured, match="X_FLAG='maybe' is not a boolean"):
        env.env_bool("X_FLAG", False)


def test_env_int_refuses_words_and_too_small_values(monkeypatch):
    monkeypatch.setenv("X_INT", "ten")
    with pytest.raises(ImproperlyConfigured, match="not a whole number"):
        env.env_int("X_INT", 1)
    monkeypatch.setenv("X_INT", "-3")
    with pytest.raises(ImproperlyConfigured, match="below its minimum"):
        env.env_int("X_INT", 1, minimum=0)


def test_database_url_defaults_to_sqlite_under_var(monkeypatch, tmp_path):
    monkeypatch.delenv("X_DB", raising=False)
    config = env.env_database("X_DB", tmp_path / "db.sqlite3")
    assert config["ENGINE"] == "django.db.backends.sqlite3"
    assert config["NAME"] == str(tmp_path / "db.sqlite3")


def test_database_url_with_an_unknown_scheme_is_refused(monkeypatch, tmp_path):
    monkeypatch.setenv("X_DB", "oracle-ish://nowhere")
    with pytest.raises(ImproperlyConfigured, match="X_DB"):
        env.env_database("X_DB", tmp_path / "db.sqlite3")


def test_broker_url_with_an_unknown_scheme_is_refused(monkeypatch):
    monkeypatch.setenv("X_BROKER", "kafka://somewhere")
    with pytest.raises(ImproperlyConfigured, match="unsupported scheme"):
        env.env_broker_url("X_BROKER", "filesystem://")


def test_the_cache_is_per_process_unless_a_redis_url_is_given(monkeypatch):
    monkeypatch.delenv("X_CACHE", raising=False)
    assert env.env_cache("X_CACHE")["BACKEND"].endswith("LocMemCache")
    monkeypatch.setenv("X_CACHE", "redis://redis:6379/2")
    shared = env.env_cache("X_CACHE")
    assert shared["BACKEND"].endswith("RedisCache") and shared["LOCATION"] == "redis://redis:6379/2"
    assert shared["OPTIONS"] == {"socket_connect_timeout": 2, "socket_timeout": 2}
    monkeypatch.setenv("X_CACHE", "memcached://mc:11211")
    with pytest.raises(ImproperlyConfigured, match="X_CACHE='memcached://mc:11211'"):
        env.env_cache("X_CACHE")


def test_secret_key_is_generated_once_and_kept(monkeypatch, tmp_path):
    monkeypatch.delenv("X_SECRET", raising=False)
    first = env.secret_key("X_SECRET", tmp_path / "key")
    assert len(first) > 40
    assert env.secret_key("X_SECRET", tmp_path / "key") == first
    assert oct((tmp_path / "key").stat().st_mode & 0o777) == "0o600"


def test_a_bad_setting_stops_manage_py_with_a_clear_message():
    result = subprocess.run(
        [sys.executable, "manage.py", "check"],
        cwd=ROOT,
        env={**os.environ, "DEBUG": "sometimes"},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode != 0
    assert "DEBUG='sometimes' is not a boolean" in result.stderr


@pytest.mark.django_db
@pytest.mark.skipif(not os.environ.get("CI"), reason="CI runs the suite on PostgreSQL")
def test_ci_runs_on_postgresql():
    assert connection.vendor == "postgresql"
