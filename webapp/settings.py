"""Topolens settings: one module, every knob read through webapp.env."""

from __future__ import annotations

import atexit
import os
import re
import shutil
import sys
import tempfile
from datetime import timedelta
from pathlib import Path

from csp.constants import NONE, SELF
from django.core.exceptions import ImproperlyConfigured
from kombu import Exchange, Queue

from webapp.env import (
    env_bool,
    env_broker_url,
    env_cache,
    env_database,
    env_int,
    env_list,
    env_str,
    secret_key,
)

BASE_DIR = Path(__file__).resolve().parent.parent
# The test suite never shares a database, broker folder or any file with a running
# instance (`make run` keeps its own under var/), nor with another test run: under pytest
# the default is a folder of its own under var/ (its Celery workers inherit it through
# TOPOLENS_VAR_DIR), removed when the run ends.
TESTING = "pytest" in sys.modules
if TESTING and "TOPOLENS_VAR_DIR" not in os.environ:
    (BASE_DIR / "var").mkdir(exist_ok=True)
    os.environ["TOPOLENS_VAR_DIR"] = tempfile.mkdtemp(prefix="test-", dir=BASE_DIR / "var")
    atexit.register(shutil.rmtree, os.environ["TOPOLENS_VAR_DIR"], ignore_errors=True)
VAR_DIR = Path(env_str("TOPOLENS_VAR_DIR", str(BASE_DIR / "var")))
VAR_DIR.mkdir(parents=True, exist_ok=True)

SECRET_KEY = secret_key("SECRET_KEY", VAR_DIR / "secret_key")
DEBUG = env_bool("DEBUG", False)
ALLOWED_HOSTS = env_list("ALLOWED_HOSTS", ["localhost", "127.0.0.1", "[::1]"])

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "whitenoise.runserver_nostatic",
    "django.contrib.staticfiles",
    "rest_framework",
    "django_filters",
    "drf_spectacular",
    "drf_spectacular_sidecar",
    "django_celery_beat",
    "axes",
    "csp",
    "topology",
    "scheduler_api",
]

MIDDLEWARE = [
    "webapp.request_id.RequestIdMiddleware",
    "webapp.nul_bytes.RefuseNulMiddleware",
    "django.middleware.security.SecurityMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "csp.middleware.CSPMiddleware",
    "webapp.no_store.NoStoreJSONMiddleware",
    "scheduler_api.api.field_validation.WarningHeaderMiddleware",
    # last, as django-axes asks: it turns a lockout raised in a login into its response
    "axes.middleware.AxesMiddleware",
]

ROOT_URLCONF = "webapp.urls"
TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
            ],
        },
    },
]
WSGI_APPLICATION = "webapp.wsgi.application"
ASGI_APPLICATION = "webapp.asgi.application"

DATABASES = {"default": env_database("DATABASE_URL", VAR_DIR / "topolens.sqlite3")}
if DATABASES["default"]["ENGINE"].endswith("sqlite3"):
    # A file, not memory, so that a real Celery worker process can share the test database.
    DATABASES["default"]["TEST"] = {"NAME": str(VAR_DIR / "test-topolens.sqlite3")}
    # Workers write concurrently (a sync session per cluster, figures, imports): WAL lets
    # readers go on while one writes, and IMMEDIATE transactions wait for the write lock
    # (up to the timeout) instead of failing with "database is locked".
    DATABASES["default"]["OPTIONS"] = {
        "transaction_mode": "IMMEDIATE",
        "timeout": 30,
        "init_command": "PRAGMA journal_mode=WAL;",
    }
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"
# Some indexes carry INCLUDE columns, a PostgreSQL optimisation SQLite has no use for: it
# builds them without those columns, so the warning every command printed says nothing.
SILENCED_SYSTEM_CHECKS = (
    ["models.W040"] if DATABASES["default"]["ENGINE"].endswith("sqlite3") else []
)

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
]

LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
USE_I18N = True
USE_TZ = True

STATIC_URL = "static/"
STATICFILES_DIRS = [BASE_DIR / "static"]
STATIC_ROOT = VAR_DIR / "staticfiles"
STATIC_ROOT.mkdir(parents=True, exist_ok=True)
# collectstatic writes each file under a content hash, gzipped beside it; WhiteNoise
# serves those compressed and cacheable for a year (a changed file gets a new name).
# The test suite renders pages without collecting them first: plain names there.
STATIC_STORAGE = (
    "django.contrib.staticfiles.storage.StaticFilesStorage"
    if TESTING
    else "whitenoise.storage.CompressedManifestStaticFilesStorage"
)
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {"BACKEND": STATIC_STORAGE},
}

# --- Dashboard -------------------------------------------------------------------
# Every dashboard page needs a login (the dashboard's own, for any account with a role)
# and the permissions the API asks for the same action (`topology.access`). Plotly's
# JavaScript is our own static file (the cartesian bundle of the plotly.js version the
# plotly package ships; `topology.checks` holds them equal), so the dashboard needs no
# internet access.
LOGIN_URL = "login"
LOGIN_REDIRECT_URL = "topology:home"
LOGOUT_REDIRECT_URL = "login"
# --- end of dashboard block --------------------------------------------------------

# --- Security (README "Security": what each setting does, and production values) ----
# Login brute force (django-axes): after LOGIN_FAILURE_LIMIT wrong passwords for one
# username from one address, that pair is locked out for LOGIN_LOCKOUT_MINUTES (429 and
# a page saying so), on the dashboard's login and admin's alike; a right password resets
# the count. API tokens are long random secrets checked by hash, and are not counted.
AUTHENTICATION_BACKENDS = [
    "axes.backends.AxesStandaloneBackend",
    "django.contrib.auth.backends.ModelBackend",
]
AXES_ENABLED = env_bool("LOGIN_LOCKOUT", True)
AXES_FAILURE_LIMIT = env_int("LOGIN_FAILURE_LIMIT", 5, minimum=1)
AXES_COOLOFF_TIME = timedelta(minutes=env_int("LOGIN_LOCKOUT_MINUTES", 15, minimum=1))
AXES_LOCKOUT_PARAMETERS = [["username", "ip_address"]]
AXES_RESET_ON_SUCCESS = True
AXES_LOCKOUT_TEMPLATE = "registration/locked_out.html"
AXES_VERBOSE = False  # no start-up banner; each failure and lockout is still logged
# Behind TLS (HTTPS=true, what deploy/kubernetes sets): redirect plain HTTP, cookies only
# over HTTPS, HSTS for a year. Each can be set on its own too.
HTTPS = env_bool("HTTPS", False)
SECURE_SSL_REDIRECT = env_bool("SECURE_SSL_REDIRECT", HTTPS)
SESSION_COOKIE_SECURE = env_bool("SECURE_COOKIES", HTTPS)
CSRF_COOKIE_SECURE = SESSION_COOKIE_SECURE
SECURE_HSTS_SECONDS = env_int("SECURE_HSTS_SECONDS", 31_536_000 if HTTPS else 0)
SECURE_HSTS_INCLUDE_SUBDOMAINS = env_bool("SECURE_HSTS_INCLUDE_SUBDOMAINS", HTTPS)
# "preload" in the header only allows submitting the domain to browsers' preload lists
# (hstspreload.org, the owner's act); SECURE_HSTS_PRELOAD=false leaves it out.
SECURE_HSTS_PRELOAD = env_bool("SECURE_HSTS_PRELOAD", HTTPS)
# Only behind a proxy that sets X-Forwarded-Proto itself (an ingress terminating TLS);
# anywhere else a client could claim HTTPS with the header.
if env_bool("TRUST_X_FORWARDED_PROTO", False):
    SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
# Origins (scheme://host[:port]) a form may be posted from, e.g. https://topolens.example.com
CSRF_TRUSTED_ORIGINS = env_list("CSRF_TRUSTED_ORIGINS", [])
SESSION_COOKIE_AGE = env_int("SESSION_COOKIE_AGE_SECONDS", 8 * 3600, minimum=60)
# Content-Security-Policy on every page (django-csp): nothing from another host, no inline
# script; Plotly and Django admin draw inline styles. The API docs pages relax script-src
# for their inline start-up code (`webapp.offline`).
CONTENT_SECURITY_POLICY = {
    "DIRECTIVES": {
        "default-src": [SELF],
        "script-src": [SELF],
        "style-src": [SELF, "'unsafe-inline'"],
        "img-src": [SELF, "data:", "blob:"],
        "font-src": [SELF, "data:"],
        "connect-src": [SELF],
        "worker-src": [SELF, "blob:"],
        "object-src": [NONE],
        "base-uri": [SELF],
        "form-action": [SELF],
        "frame-ancestors": [NONE],
    }
}

# Django's cache: per process by default; in production Redis (CACHE_URL), shared by
# every process, for the API's per-user throttles and the what-if answers.
CACHES = {"default": env_cache("CACHE_URL")}

# API: per-user throttle rates ("<count>/<second|minute|hour|day>") for the expensive
# endpoints, the largest what-if (replicas) answered within the request, and page sizes.
API_THROTTLE_RATES = {
    "whatif": env_str("API_THROTTLE_WHATIF", "120/minute"),
    "export": env_str("API_THROTTLE_EXPORT", "30/hour"),
}
for _scope, _rate in API_THROTTLE_RATES.items():
    if not re.fullmatch(r"[1-9]\d*/(s|sec|second|m|min|minute|h|hour|d|day)", _rate):
        raise ImproperlyConfigured(
            f"API_THROTTLE_{_scope.upper()}={_rate!r} is not a rate such as 120/minute."
        )
API_WHATIF_SYNC_MAX_REPLICAS = env_int("API_WHATIF_SYNC_MAX_REPLICAS", 16, minimum=1)
# Engine snapshots of the most recently used clusters kept per process (0: off).
WHATIF_SNAPSHOT_CACHE_SIZE = env_int("WHATIF_SNAPSHOT_CACHE_SIZE", 2, minimum=0)
# What-if answers kept with each cached snapshot (about 1 MB each at 5,000 nodes).
WHATIF_ANSWER_CACHE_SIZE = env_int("WHATIF_ANSWER_CACHE_SIZE", 32, minimum=0)
# ... and at most this many bytes of them (encoded) per process; a larger answer is not kept.
WHATIF_ANSWER_CACHE_BYTES = env_int("WHATIF_ANSWER_CACHE_BYTES", 64 * 1024 * 1024, minimum=0)
# Finished background what-ifs (and their answers) are deleted after this long.
WHATIF_TASK_RETENTION_SECONDS = env_int("WHATIF_TASK_RETENTION_SECONDS", 86400, minimum=60)
# The top-ranked nodes of each system whose cpuset a what-if works out in detail.
WHATIF_DETAILED_NODES = env_int("WHATIF_DETAILED_NODES", 3, minimum=1)
API_PAGE_SIZE = env_int("API_PAGE_SIZE", 50, minimum=1)
API_MAX_PAGE_SIZE = env_int("API_MAX_PAGE_SIZE", 1000, minimum=1)

REST_FRAMEWORK = {
    "DEFAULT_SCHEMA_CLASS": "drf_spectacular.openapi.AutoSchema",
    "DEFAULT_FILTER_BACKENDS": ["django_filters.rest_framework.DjangoFilterBackend"],
    # Token first: its WWW-Authenticate header is what turns "no credentials" into a 401.
    "DEFAULT_AUTHENTICATION_CLASSES": [
        "scheduler_api.api.authentication.APITokenAuthentication",
        "rest_framework.authentication.SessionAuthentication",
    ],
    "DEFAULT_PERMISSION_CLASSES": ["scheduler_api.api.permissions.RolePermission"],
    "DEFAULT_PAGINATION_CLASS": "scheduler_api.api.pagination.PageNumberPagination",
    "PAGE_SIZE": API_PAGE_SIZE,
    "DEFAULT_RENDERER_CLASSES": ["rest_framework.renderers.JSONRenderer"],
    "DEFAULT_PARSER_CLASSES": ["scheduler_api.api.parsers.DuplicateAwareJSONParser"],
    "DEFAULT_THROTTLE_RATES": API_THROTTLE_RATES,
    "EXCEPTION_HANDLER": "scheduler_api.api.exceptions.exception_handler",
}
SPECTACULAR_SETTINGS = {
    "TITLE": "Topolens API",
    "DESCRIPTION": (
        "Read the mirror of each cluster (nodes, NUMA topology, pods, reservations, QoS, "
        "desired policies), ask what-if placement questions and export a cluster. "
        "Authenticate with `Authorization: Bearer <token>` (tokens are created in admin) "
        "or a browser session."
    ),
    "VERSION": "1.0.0",
    "SCHEMA_PATH_PREFIX": "/api/v1",
    "SERVE_INCLUDE_SCHEMA": False,
    "COMPONENT_SPLIT_REQUEST": True,
    "ENUM_NAME_OVERRIDES": {
        "ReservationApplyPolicyEnum": "topology.choices.ReservationApplyPolicy",
    },
    "POSTPROCESSING_HOOKS": [
        "drf_spectacular.hooks.postprocess_schema_enums",
        "scheduler_api.api.schema.add_error_responses",
        "scheduler_api.api.schema.add_field_validation",
    ],
    "SWAGGER_UI_DIST": "SIDECAR",
    "SWAGGER_UI_FAVICON_HREF": "SIDECAR",
    "REDOC_DIST": "SIDECAR",
}

# Celery: the embedded default is kombu's filesystem transport under var/, which
# needs no server yet is consumed by a real worker process. Production uses Redis.
BROKER_DIR = VAR_DIR / "broker"
CELERY_BROKER_URL = env_broker_url("CELERY_BROKER_URL", "filesystem://")
if CELERY_BROKER_URL.startswith("filesystem://"):
    for sub in ("in", "processed", "control"):
        (BROKER_DIR / sub).mkdir(parents=True, exist_ok=True)
    CELERY_BROKER_TRANSPORT_OPTIONS = {
        "data_folder_in": str(BROKER_DIR / "in"),
        "data_folder_out": str(BROKER_DIR / "in"),
        "processed_folder": str(BROKER_DIR / "processed"),
        "control_folder": str(BROKER_DIR / "control"),
        "store_processed": False,
    }
# Task outcomes that matter are stored in our own models, so no result backend.
CELERY_RESULT_BACKEND = env_str("CELERY_RESULT_BACKEND", "") or None
CELERY_TASK_SERIALIZER = "json"
CELERY_ACCEPT_CONTENT = ["json"]
CELERY_TIMEZONE = TIME_ZONE
CELERY_BEAT_SCHEDULER = "django_celery_beat.schedulers:DatabaseScheduler"
# Watch loops run for minutes on their own queue, so they never hold up short tasks.
# A worker started without -Q (the embedded default of `make run`) consumes both
# queues; in production one Deployment consumes each (deploy/kubernetes).
CELERY_TASK_DEFAULT_QUEUE = "celery"
CELERY_TASK_QUEUES = tuple(Queue(q, Exchange(q), routing_key=q) for q in ("celery", "watch"))
CELERY_TASK_ROUTES = {"topology.watch_cluster": {"queue": "watch"}}
# A worker busy with a watch must not sit on messages an idle worker could run.
CELERY_WORKER_PREFETCH_MULTIPLIER = 1

# Live cluster sync (topology.sync.settings.SyncSettings): seconds, or milliseconds (_MS).
TOPOLENS_SYNC = {
    "page_size": env_int("TOPOLENS_SYNC_PAGE_SIZE", 500, minimum=1),
    "connect_timeout": env_int("TOPOLENS_SYNC_CONNECT_TIMEOUT_MS", 5_000, minimum=1) / 1000,
    "read_timeout": env_int("TOPOLENS_SYNC_READ_TIMEOUT_MS", 30_000, minimum=1) / 1000,
    "watch_timeout": env_int("TOPOLENS_SYNC_WATCH_TIMEOUT_SECONDS", 240, minimum=1),
    "watch_read_margin": env_int("TOPOLENS_SYNC_WATCH_MARGIN_MS", 30_000, minimum=1) / 1000,
    "backoff_initial": env_int("TOPOLENS_SYNC_BACKOFF_INITIAL_MS", 500, minimum=1) / 1000,
    "backoff_ceiling": env_int("TOPOLENS_SYNC_BACKOFF_CEILING_MS", 60_000, minimum=1) / 1000,
    "batch_size": env_int("TOPOLENS_SYNC_BATCH_SIZE", 500, minimum=1),
    "flush_interval": env_int("TOPOLENS_SYNC_FLUSH_INTERVAL_MS", 200, minimum=1) / 1000,
    "session_seconds": env_int("TOPOLENS_SYNC_SESSION_SECONDS", 600, minimum=1),
    "lease_seconds": env_int("TOPOLENS_SYNC_LEASE_SECONDS", 90, minimum=3),
    "resync_interval": env_int("TOPOLENS_SYNC_RESYNC_SECONDS", 3600, minimum=60),
    "list_page_writers": env_int("TOPOLENS_SYNC_LIST_PAGE_WRITERS", 2, minimum=1),
    "figures_interval": env_int("TOPOLENS_FIGURES_SECONDS", 300, minimum=10),
}
# Applies whose task was lost (broker restarted, worker killed): housekeeping sends the
# task again after `requeue_seconds`, and gives up on the apply after `expire_seconds`.
TOPOLENS_APPLY = {
    "requeue_seconds": env_int("TOPOLENS_APPLY_REQUEUE_SECONDS", 120, minimum=10),
    "expire_seconds": env_int("TOPOLENS_APPLY_EXPIRE_SECONDS", 3600, minimum=60),
}
# Warning events about pods (topology.services.mirror.events): kept after the API server
# expires them, pruned by housekeeping past this age (seconds since last seen) and
# beyond this many rows per cluster, the newest kept.
TOPOLENS_EVENT_RETENTION_SECONDS = env_int("TOPOLENS_EVENT_RETENTION_SECONDS", 86400, minimum=60)
TOPOLENS_EVENT_RETENTION_COUNT = env_int("TOPOLENS_EVENT_RETENTION_COUNT", 10_000, minimum=1)
# Figures over time (topology.services.observability.history): kept this many days, then pruned by
# housekeeping.
TOPOLENS_HISTORY_DAYS = env_int("TOPOLENS_HISTORY_DAYS", 14, minimum=1)
# What-ifs asked with `track: true` (topology.services.audit.predictions): how long a
# prediction waits for a pod of its owner (or name) to land before it expires.
TOPOLENS_PREDICTION_WINDOW_SECONDS = env_int("TOPOLENS_PREDICTION_WINDOW_SECONDS", 3600, minimum=60)
if TOPOLENS_SYNC["backoff_ceiling"] < TOPOLENS_SYNC["backoff_initial"]:
    raise ImproperlyConfigured(
        "TOPOLENS_SYNC_BACKOFF_CEILING_MS must not be below TOPOLENS_SYNC_BACKOFF_INITIAL_MS."
    )

# Everything goes to stderr (what container runtimes collect), one line a record with the
# request id (`webapp.request_id`): request errors with their traceback (django.request
# logs every 500), sync and task errors. Celery workers log through their own handler.
LOG_LEVEL = env_str("LOG_LEVEL", "INFO").upper()
if LOG_LEVEL not in ("DEBUG", "INFO", "WARNING", "ERROR"):
    raise ImproperlyConfigured(f"LOG_LEVEL={LOG_LEVEL!r}: one of DEBUG, INFO, WARNING, ERROR.")
LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "filters": {"request_id": {"()": "webapp.request_id.RequestIdFilter"}},
    "formatters": {
        "plain": {"format": "%(asctime)s %(levelname)s %(name)s [%(request_id)s] %(message)s"}
    },
    "handlers": {
        "stderr": {
            "class": "logging.StreamHandler",
            "stream": "ext://sys.stderr",
            "formatter": "plain",
            "filters": ["request_id"],
        }
    },
    "root": {"handlers": ["stderr"], "level": LOG_LEVEL},
    # Django's own handlers print only with DEBUG on: its records go to the root instead
    "loggers": {"django": {"handlers": [], "level": "INFO", "propagate": True}},
}
