"""A what-if answer worked out by one process serves the others through Redis.

Each gunicorn worker (and Celery) keeps its own snapshot and answers; with a shared
cache (CACHE_URL=redis://…) a question asked of one worker is not worked out again by
the next. Here "another process" is this one with its snapshot cache emptied. These
tests talk to the real Redis server (CI provides one on 127.0.0.1:6379).
"""

from __future__ import annotations

import copy
import os
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import orjson
import pytest
import redis
from django.core.cache import caches
from django.core.signals import request_finished, request_started

from tests.topology.helpers import WEB_POD, sample_items
from topology.services.mirror.importer import import_objects
from topology.services.whatif import answer_cache
from topology.services.whatif.service import run_whatif
from topology.services.whatif.snapshot_cache import clear_snapshot_cache

pytestmark = pytest.mark.django_db

TEST_DB = 14  # a Redis database of its own: the tests empty it


def redis_url() -> str:
    """The broker's Redis server when it is Redis (CI), else the local default one."""
    broker = os.environ.get("CELERY_BROKER_URL", "")
    base = broker if broker.startswith("redis://") else "redis://127.0.0.1:6379/0"
    return urlunsplit(urlsplit(base)._replace(path=f"/{TEST_DB}"))


@pytest.fixture
def shared(settings) -> str:
    url = redis_url()
    try:
        redis.Redis.from_url(url, socket_connect_timeout=2).ping()
    except redis.RedisError:
        if os.environ.get("CI"):
            raise
        pytest.skip(f"no Redis at {url}")
    settings.CACHES = {
        "default": {"BACKEND": "django.core.cache.backends.redis.RedisCache", "LOCATION": url}
    }
    settings.WHATIF_SNAPSHOT_CACHE_SIZE = 2
    settings.WHATIF_ANSWER_CACHE_SIZE = 4
    caches["default"].clear()
    clear_snapshot_cache()
    yield url
    caches["default"].clear()
    clear_snapshot_cache()


def without_age(answer: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in answer.items() if k != "data_age_seconds"}


def test_another_process_answers_from_the_shared_cache(shared, small, engine_runs):
    first = run_whatif(cluster=small, pod=WEB_POD, replicas=2)
    stored = redis.Redis.from_url(shared)
    (key,) = stored.keys("*topolens:whatif:*")
    assert len(stored.get(key) or b"") < len(orjson.dumps(first)) / 2  # kept compressed
    clear_snapshot_cache()  # another process: its own snapshot, no answers of its own
    again = run_whatif(cluster=small, pod=copy.deepcopy(WEB_POD), replicas=2)
    assert len(engine_runs) == 1
    assert without_age(again) == without_age(first)
    clear_snapshot_cache()
    served = run_whatif(cluster=small, pod=WEB_POD, replicas=2, fragments=True)
    assert len(engine_runs) == 1
    assert not isinstance(served["nodes"], list)  # encoded, for the API's orjson renderer


def test_a_process_of_another_answer_format_takes_no_shared_answer(
    shared, small, engine_runs, monkeypatch
):
    run_whatif(cluster=small, pod=WEB_POD)
    monkeypatch.setattr(answer_cache, "ANSWER_FORMAT", answer_cache.ANSWER_FORMAT + 1)
    clear_snapshot_cache()
    run_whatif(cluster=small, pod=WEB_POD)
    assert len(engine_runs) == 2


def test_a_changed_mirror_takes_no_shared_answer(shared, small, engine_runs):
    run_whatif(cluster=small, pod=WEB_POD)
    items = sample_items("cluster-small.json")
    node = copy.deepcopy(next(i for i in items if i["kind"] == "Node"))
    node["spec"] = {**node.get("spec", {}), "unschedulable": True}
    import_objects(cluster_name="small", objects=[node])
    clear_snapshot_cache()
    after = run_whatif(cluster=small, pod=WEB_POD)
    assert len(engine_runs) == 2
    verdict = {v["node"]: v for v in after["nodes"]}[node["metadata"]["name"]]
    assert not verdict["fits"]


def test_an_unreachable_cache_only_costs_the_engine_run(settings, small, engine_runs, caplog):
    settings.CACHES = {
        "default": {
            "BACKEND": "django.core.cache.backends.redis.RedisCache",
            "LOCATION": "redis://127.0.0.1:1/0",  # nothing listens there
        }
    }
    settings.WHATIF_SNAPSHOT_CACHE_SIZE = 2
    settings.WHATIF_ANSWER_CACHE_SIZE = 4
    clear_snapshot_cache()
    first = run_whatif(cluster=small, pod=WEB_POD)
    clear_snapshot_cache()
    again = run_whatif(cluster=small, pod=WEB_POD)
    clear_snapshot_cache()
    assert len(engine_runs) == 2
    assert without_age(again) == without_age(first)
    assert "shared cache not read" in caplog.text and "shared cache not written" in caplog.text


def test_during_a_request_the_answer_is_shared_once_the_response_is_sent(
    shared, small, engine_runs, request_signals
):
    stored = redis.Redis.from_url(shared)
    request_started.send(sender=None)
    try:
        run_whatif(cluster=small, pod=WEB_POD)
        assert stored.keys("*topolens:whatif:*") == []  # not while the user waits
    finally:
        request_finished.send(sender=None)
    assert len(stored.keys("*topolens:whatif:*")) == 1
