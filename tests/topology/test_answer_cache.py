"""A what-if asked again on an unchanged mirror is answered from memory, and only then."""

from __future__ import annotations

import copy

import orjson
import pytest

from tests.topology.helpers import WEB_POD, sample_items
from topology.services.mirror.importer import import_objects
from topology.services.whatif import answer_cache
from topology.services.whatif.service import compare_schedulers, run_whatif

pytestmark = pytest.mark.django_db


@pytest.fixture
def cache_on(settings) -> None:
    settings.WHATIF_SNAPSHOT_CACHE_SIZE = 2
    settings.WHATIF_ANSWER_CACHE_SIZE = 4


def test_the_same_question_is_answered_once(cache_on, small, engine_runs):
    first = run_whatif(cluster=small, pod=WEB_POD, replicas=2)
    again = run_whatif(cluster=small, pod=copy.deepcopy(WEB_POD), replicas=2)
    assert len(engine_runs) == 1
    assert {k: v for k, v in again.items() if k != "data_age_seconds"} == {
        k: v for k, v in first.items() if k != "data_age_seconds"
    }
    assert again["data_age_seconds"] >= first["data_age_seconds"]  # dated when served


def test_a_different_question_runs_the_engine(cache_on, small, engine_runs):
    run_whatif(cluster=small, pod=WEB_POD, replicas=2)
    run_whatif(cluster=small, pod=WEB_POD, replicas=3)
    run_whatif(cluster=small, pod=WEB_POD, replicas=2, scheduler="crane")
    assert len(engine_runs) == 3


def test_a_changed_mirror_is_never_answered_from_memory(cache_on, small, engine_runs):
    before = run_whatif(cluster=small, pod=WEB_POD)
    items = sample_items("cluster-small.json")
    node = copy.deepcopy(next(i for i in items if i["kind"] == "Node"))
    node["spec"] = {**node.get("spec", {}), "unschedulable": True}
    import_objects(cluster_name="small", objects=[node])
    after = run_whatif(cluster=small, pod=WEB_POD)
    assert len(engine_runs) == 2
    name = node["metadata"]["name"]
    verdict = {v["node"]: v for v in after["nodes"]}[name]
    assert not verdict["fits"]
    assert {v["node"]: v for v in before["nodes"]}[name] != verdict


def test_a_caller_cannot_change_what_is_kept(cache_on, small, engine_runs):
    first = run_whatif(cluster=small, pod=WEB_POD)
    first["nodes"].clear()
    assert run_whatif(cluster=small, pod=WEB_POD)["nodes"]


def test_draft_policies_are_never_kept(cache_on, small, engine_runs):
    run_whatif(cluster=small, pod=WEB_POD, use_draft_policies=True)
    run_whatif(cluster=small, pod=WEB_POD, use_draft_policies=True)
    assert len(engine_runs) == 2


def test_a_scheduler_comparison_shares_the_answers(cache_on, small, engine_runs):
    compared = compare_schedulers(cluster=small, pod=WEB_POD, replicas=1)
    alone = run_whatif(cluster=small, pod=WEB_POD, replicas=1, scheduler="crane")
    assert len(engine_runs) == 4  # one per system compared; the crane answer is shared
    assert alone["nodes"] == compared["crane"]["nodes"]


def test_only_so_many_answers_are_kept(cache_on, small, engine_runs):
    for replicas in range(6):
        run_whatif(cluster=small, pod=WEB_POD, replicas=replicas)
    run_whatif(cluster=small, pod=WEB_POD, replicas=5)  # kept
    run_whatif(cluster=small, pod=WEB_POD, replicas=0)  # pushed out by the four after it
    assert len(engine_runs) == 7


def test_a_question_that_is_not_json_is_answered_but_not_kept(cache_on, small):
    assert answer_cache.question_key({"pod": {"when": object()}}) is None


def test_turned_off(settings, small, engine_runs):
    settings.WHATIF_SNAPSHOT_CACHE_SIZE = 2
    settings.WHATIF_ANSWER_CACHE_SIZE = 0
    run_whatif(cluster=small, pod=WEB_POD)
    run_whatif(cluster=small, pod=WEB_POD)
    assert len(engine_runs) == 2


def test_fragments_render_as_the_answer(cache_on, small, engine_runs):
    plain = run_whatif(cluster=small, pod=WEB_POD, replicas=2)
    served = run_whatif(cluster=small, pod=WEB_POD, replicas=2, fragments=True)
    assert len(engine_runs) == 1
    assert isinstance(served["nodes"], orjson.Fragment)
    rendered = orjson.loads(orjson.dumps(served))
    assert list(rendered) == list(plain)  # same keys, same order
    assert {k: v for k, v in rendered.items() if k != "data_age_seconds"} == {
        k: v for k, v in plain.items() if k != "data_age_seconds"
    }


def test_the_kept_answers_are_bounded_by_bytes(cache_on, settings, small, engine_runs):
    """Issue 28: nine answers of 100 MB held a gigabyte per worker."""
    from topology.services.whatif.snapshot_cache import answer_book, cached_cluster_snapshot

    run_whatif(cluster=small, pod=WEB_POD, replicas=1)
    _, book = answer_book(cached_cluster_snapshot(small))
    one = sum(len(key) + kept.nbytes for key, kept in book.items())
    settings.WHATIF_ANSWER_CACHE_BYTES = int(one * 2.5)  # room for two answers, not three
    for replicas in (2, 3):
        run_whatif(cluster=small, pod=WEB_POD, replicas=replicas)
    assert len(book) == 2  # the oldest went although the count allows four
    assert sum(len(key) + kept.nbytes for key, kept in book.items()) <= one * 2.5
    settings.WHATIF_ANSWER_CACHE_BYTES = one // 2  # smaller than any answer: none is kept
    runs = len(engine_runs)
    run_whatif(cluster=small, pod=WEB_POD, replicas=7)
    run_whatif(cluster=small, pod=WEB_POD, replicas=7)
    assert len(engine_runs) == runs + 2
