"""What-if answers kept while the mirror they were worked out on is unchanged.

Platform teams ask the same question again and again (a CI pipeline before every
rollout, the dashboard form submitted twice); on 5,000 nodes an answer takes a few
hundred milliseconds of engine time. An answer depends only on the question and on the
engine snapshot, and a cached snapshot (`snapshot_cache`) is one object per mirror
version: answers are kept with that entry, so none is ever served for a mirror it was
not computed on, and they go when the snapshot goes. A snapshot that is not the cached
one (cache off, draft policies applied) keeps no answers.

Answers are kept encoded (about 1 MB at 5,000 nodes, a tenth of the dicts) and decoded
afresh for each caller, who may change its copy freely. `data_age_seconds` is the
caller's own snapshot's: data grows older while an answer is kept.
`WHATIF_ANSWER_CACHE_SIZE` answers per cached snapshot; 0 turns this off.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import orjson
from django.conf import settings

from scheduler_api.engine.snapshot import ClusterSnapshot
from topology.services.snapshot_cache import answer_book, answer_lock

Answer = dict[str, Any]


def question_key(question: Mapping[str, Any]) -> bytes | None:
    """The question in one canonical encoding; None if it cannot be encoded (not kept)."""
    try:
        return orjson.dumps(question, option=orjson.OPT_SORT_KEYS)
    except TypeError:
        return None  # e.g. a YAML date in a manifest: answered, just not kept


def remembered_answer(
    snapshot: ClusterSnapshot, question: Mapping[str, Any], compute: Callable[[], Answer]
) -> Answer:
    """`compute()`, or the answer it gave for this question on this snapshot's mirror."""
    size: int = settings.WHATIF_ANSWER_CACHE_SIZE
    asked = question_key(question) if size > 0 else None
    book = answer_book(snapshot) if asked is not None else None
    if asked is None or book is None:
        return compute()
    with answer_lock:
        encoded = book.get(asked)
        if encoded is not None:
            book.move_to_end(asked)
    if encoded is not None:
        answer: Answer = orjson.loads(encoded)
        answer["data_age_seconds"] = snapshot.data_age_seconds
        return answer
    answer = compute()
    try:
        encoded = orjson.dumps(answer)
    except TypeError:
        return answer  # not plain JSON: not kept
    with answer_lock:
        book[asked] = encoded
        while len(book) > size:
            book.popitem(last=False)
    return answer
