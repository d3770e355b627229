"""Small typed readers for settings taken from the environment.

Each helper refuses a bad value at start-up with a message that names the
variable, instead of failing later deep inside a request.
"""

from __future__ import annotations

import os
import secrets
from pathlib import Path

import dj_database_url
from django.core.exceptions import ImproperlyConfigured

_TRUE = {"1", "true", "yes", "on"}
_FALSE = {"0", "false", "no", "off", ""}
_BROKER_SCHEMES = ("filesystem://", "redis://", "rediss://", "amqp://", "memory://")


def env_str(name: str, default: str) -> str:
    return os.environ.get(name, default)


def env_bool(name: str, default: bool) -> bool:
    raw = os.environ.get(name)
    if raw is None:
        return default
    value = raw.strip().lower()
    if value in _TRUE:
        return True
    if value in _FALSE:
        return False
    raise ImproperlyConfigured(f"{name}={raw!r} is not a boolean; use true or false.")


def env_int(name: str, default: int, *, minimum: int = 0) -> int:
    raw = os.environ.get(name)
    if raw is None:
        return default
    try:
        value = int(raw)
    except ValueError:
        raise ImproperlyConfigured(f"{name}={raw!r} is not a whole number.") from None
    if value < minimum:
        raise ImproperlyConfigured(f"{name}={value} is below its minimum of {minimum}.")
    return value


def env_list(name: str, default: list[str]) -> list[str]:
    raw = os.environ.get(name)
    if raw is None:
        return default
    return [item.strip() for item in raw.split(",") if item.strip()]


def env_database(name: str, default_sqlite: Path) -> dict[str, object]:
    """Parse a database URL; SQLite under var/ when the variable is unset."""
    raw = os.environ.get(name) or f"sqlite:///{default_sqlite}"
    try:
        config = dj_database_url.parse(raw, conn_max_age=60)
    except ValueError as exc:
        raise ImproperlyConfigured(f"{name} is not a usable database URL: {exc}") from None
    if not config.get("ENGINE"):
        raise ImproperlyConfigured(f"{name} names no database engine Django knows.")
    return dict(config)


def env_broker_url(name: str, default: str) -> str:
    raw = os.environ.get(name, default)
    if not raw.startswith(_BROKER_SCHEMES):
        allowed = ", ".join(_BROKER_SCHEMES)
        raise ImproperlyConfigured(
            f"{name}={raw!r} has an unsupported scheme; use one of {allowed}"
        )
    return raw


def env_cache(name: str) -> dict[str, object]:
    """Django's default cache: `locmem://` (one per process, the default) or a Redis URL.

    Several processes (gunicorn workers, Celery) share a Redis cache: API throttles then
    count per user across all of them, and a what-if answer is shared too."""
    raw = os.environ.get(name, "locmem://").strip()
    if raw == "locmem://":
        return {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"}
    if raw.startswith(("redis://", "rediss://")):
        return {
            "BACKEND": "django.core.cache.backends.redis.RedisCache",
            "LOCATION": raw,
            # a cache that does not answer must not hold a request for long
            "OPTIONS": {"socket_connect_timeout": 2, "socket_timeout": 2},
        }
    raise ImproperlyConfigured(f"{name}={raw!r}: use locmem:// or a redis:// URL.")


def secret_key(name: str, key_file: Path) -> str:
    """The SECRET_KEY from the environment, else one generated once into key_file."""
    raw = os.environ.get(name)
    if raw:
        return raw
    if key_file.exists():
        return key_file.read_text().strip()
    key_file.parent.mkdir(parents=True, exist_ok=True)
    key = secrets.token_urlsafe(50)
    key_file.write_text(key)
    key_file.chmod(0o600)
    return key
