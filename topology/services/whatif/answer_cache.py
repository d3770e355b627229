"""What-if answers kept while the mirror they were worked out on is unchanged.

Platform teams ask the same question again and again (a CI pipeline before every
rollout, the dashboard form submitted twice); on 5,000 nodes an answer takes a few
hundred milliseconds of engine time. An answer depends only on the question and on the
engine snapshot, and a cached snapshot (`snapshot_cache`) is one object per mirror
version: answers are kept with that entry, so none is ever served for a mirror it was
not computed on, and they go when the snapshot goes. A snapshot that is not the cached
one (cache off, draft policies applied) keeps no answers.

Answers are kept encoded (about 1 MB at 5,000 nodes, a tenth of the dicts) and decoded
afresh for each caller, who may change its copy freely; a caller that renders with
orjson takes the encoded parts as they are (no decoding, no million objects for the
garbage collector to walk). `data_age_seconds` is the
caller's own snapshot's: data grows older while an answer is kept.
`WHATIF_ANSWER_CACHE_SIZE` answers per cached snapshot; 0 turns this off.

Each process keeps its own snapshot and answers. When Django's cache is shared (Redis:
`CACHE_URL`), an answer worked out by one process is also put there, under its mirror
version, so the other gunicorn workers and Celery answer the same question from it
instead of running the engine again. It is put there once the response has been sent
(`after_response`): compressing it is no part of answering. A cache that cannot be
reached only costs that.
"""

from __future__ import annotations

import hashlib
import logging
import pickle
import zlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from functools import cache
from importlib import metadata
from typing import Any

import orjson
from django.conf import settings
from django.core.cache import BaseCache, caches

from scheduler_api.engine import ClusterSnapshot
from topology.services.mirror.version import MirrorKey
from topology.services.whatif.after_response import after_response
from topology.services.whatif.snapshot_cache import answer_book, answer_lock

logger = logging.getLogger(__name__)

Answer = dict[str, Any]
HEAVY = ("nodes", "placements", "capacity")  # kept encoded; the rest is a few scalars
AGE = "data_age_seconds"


@dataclass(frozen=True)
class _Kept:
    order: tuple[str, ...]
    light: Mapping[str, Any]  # strings and numbers only
    heavy: Mapping[str, bytes]

    @property
    def nbytes(self) -> int:
        """What the entry holds, near enough: its encoded parts (the rest is scalars)."""
        return sum(len(part) for part in self.heavy.values())


def question_key(question: Mapping[str, Any]) -> bytes | None:
    """The question in one canonical encoding; None if it cannot be encoded (not kept)."""
    try:
        return orjson.dumps(question, option=orjson.OPT_SORT_KEYS)
    except TypeError:
        return None  # e.g. a YAML date in a manifest: answered, just not kept


def remembered_answer(
    snapshot: ClusterSnapshot,
    question: Mapping[str, Any],
    compute: Callable[[], Answer],
    *,
    fragments: bool = False,
) -> Answer:
    """`compute()`, or the answer it gave for this question on this snapshot's mirror.

    `compute` may return parts already encoded (`orjson.Fragment`); a caller that does
    not take fragments gets them decoded.

    `fragments`: a kept answer's large parts come as `orjson.Fragment`s (encoded JSON,
    not decoded), for a caller that renders the answer with orjson at once.
    """
    size: int = settings.WHATIF_ANSWER_CACHE_SIZE
    asked = question_key(question) if size > 0 else None
    found = answer_book(snapshot) if asked is not None else None
    if asked is None or found is None:
        return _decoded(compute(), fragments)
    version, book = found
    with answer_lock:
        kept = book.get(asked)
        if kept is not None:
            book.move_to_end(asked)
    if kept is None:
        kept = shared_answer(version, asked)
        if kept is None:
            answer = compute()
            try:
                kept = _kept(answer)
            except TypeError:
                return _decoded(answer, fragments)  # not plain JSON: not kept
            share_answer(version, asked, kept)
        _keep(book, asked, kept, size)
    return _served(kept, snapshot, fragments)


def _keep(book: Any, asked: bytes, kept: _Kept, size: int) -> None:
    """Keep `kept` (most recent last), then drop the oldest entries until the book holds
    at most `size` answers and `WHATIF_ANSWER_CACHE_BYTES` bytes (issue 28: nine answers of
    100 MB held a gigabyte per worker). An answer larger than the bound is not kept."""
    limit: int = settings.WHATIF_ANSWER_CACHE_BYTES
    if len(asked) + kept.nbytes > limit:
        return
    with answer_lock:
        book[asked] = kept
        held = sum(len(key) + entry.nbytes for key, entry in book.items())
        while len(book) > size or held > limit:
            key, entry = book.popitem(last=False)
            held -= len(key) + entry.nbytes


# --- shared between processes ------------------------------------------------------------

SHARED_SECONDS = 600  # an answer outlives its mirror version by little: versions move
# Part of every shared key, with the package's version: processes of another release (a
# rolling deploy shares Redis) never serve each other answers. Bump it with any change
# to what an answer holds, between releases too.
ANSWER_FORMAT = 1
_LOCAL_CACHES = ("LocMemCache", "DummyCache")


def _shared_cache() -> BaseCache | None:
    """Django's cache when other processes see it too (not the per-process default)."""
    backend = str(settings.CACHES.get("default", {}).get("BACKEND", ""))
    return None if backend.endswith(_LOCAL_CACHES) else caches["default"]


def _shared_key(version: MirrorKey, asked: bytes) -> str:
    cluster, created, number = version
    question = hashlib.sha256(asked).hexdigest()
    release = f"{_release()}.{ANSWER_FORMAT}"
    return f"topolens:whatif:{release}:{cluster}:{created.timestamp():.6f}:{number}:{question}"


@cache
def _release() -> str:
    try:
        return metadata.version("topolens")
    except metadata.PackageNotFoundError:  # run from a checkout that was never installed
        return "unknown"


def shared_answer(version: MirrorKey, asked: bytes) -> _Kept | None:
    """The answer another process kept for this question on this mirror version."""
    cache = _shared_cache()
    if cache is None:
        return None
    try:
        packed = cache.get(_shared_key(version, asked))
        kept = pickle.loads(zlib.decompress(packed)) if isinstance(packed, bytes) else None
    except Exception as error:  # noqa: BLE001 - the cache is an optimisation only
        logger.warning("what-if answers: shared cache not read (%s)", error)
        return None
    return kept if isinstance(kept, _Kept) else None


def share_answer(version: MirrorKey, asked: bytes, kept: _Kept) -> None:
    """Put the answer in the shared cache, once the response is sent (`after_response`):
    compressing it is no part of answering."""
    cache = _shared_cache()
    if cache is not None:
        after_response(lambda: _write_shared(cache, _shared_key(version, asked), kept))


def _write_shared(cache: BaseCache, key: str, kept: _Kept) -> None:
    try:
        cache.set(key, _packed(kept), SHARED_SECONDS)
    except Exception as error:  # noqa: BLE001 - the cache is an optimisation only
        logger.warning("what-if answers: shared cache not written (%s)", error)


def _decoded(answer: Answer, fragments: bool) -> Answer:
    """`answer` with any encoded part decoded, unless the caller takes fragments."""
    if fragments:
        return answer
    return {
        key: orjson.loads(orjson.dumps(value)) if isinstance(value, orjson.Fragment) else value
        for key, value in answer.items()
    }


def _kept(answer: Answer) -> _Kept:
    heavy = {key: orjson.dumps(answer[key]) for key in HEAVY if key in answer}
    light = {key: value for key, value in answer.items() if key not in heavy and key != AGE}
    return _Kept(tuple(answer), light, heavy)


def _served(kept: _Kept, snapshot: ClusterSnapshot, fragments: bool) -> Answer:
    """A fresh answer from what is kept, dated by the caller's snapshot."""
    answer: Answer = {}
    for key in kept.order:
        if key == AGE:
            answer[key] = snapshot.data_age_seconds
        elif key in kept.heavy:
            encoded = kept.heavy[key]
            answer[key] = orjson.Fragment(encoded) if fragments else orjson.loads(encoded)
        else:
            answer[key] = kept.light[key]
    return answer


def _packed(kept: _Kept) -> bytes:
    """The answer compressed for the shared cache: 5,000 nodes' verdicts repeat a lot
    (1 MB becomes about 50 kB, in about 2 ms), and Redis keeps every new question's."""
    return zlib.compress(pickle.dumps(kept, protocol=pickle.HIGHEST_PROTOCOL), 1)
