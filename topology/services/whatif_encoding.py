"""Node verdicts encoded straight to JSON bytes, for answers of thousands of nodes.

A what-if answers for every node; on 5,000 nodes building a dict per verdict and
encoding the list took about as long as judging the scheduler-plugins nodes. Most
verdicts share everything but their node name and score (fits, no reasons, the same
notes), so the rest of each object is encoded once per distinct value and reused.

The bytes are exactly `orjson.dumps([node_json(v) for v in verdicts])`; the tests hold
them to it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Any

import orjson

from scheduler_api.engine.whatif import NodeVerdict


def _tail_key(verdict: NodeVerdict) -> tuple[Any, ...]:
    annotations = tuple(verdict.annotations.items()) if verdict.annotations else ()
    return (
        verdict.fits,
        verdict.reasons,
        verdict.numa_zones,
        verdict.cpuset,
        annotations,
        verdict.system,
        verdict.notes,
    )


def encoded_nodes(
    verdicts: Iterable[NodeVerdict], node_json: Callable[[NodeVerdict], Mapping[str, Any]]
) -> bytes:
    """The JSON array of `node_json(v)` for each verdict, in order.

    `node_json` gives the reference object. Its keys must start with node, fits and
    score, which are encoded per node; the rest is encoded once per distinct value.
    """
    tails: dict[tuple[Any, ...], bytes] = {}
    parts: list[bytes] = []
    for verdict in verdicts:
        key = _tail_key(verdict)
        tail = tails.get(key)
        if tail is None:
            tail = tails[key] = _tail(node_json(verdict))
        fits = b"true" if verdict.fits else b"false"
        score = b"null" if verdict.score is None else b"%d" % verdict.score
        parts.append(b'{"node":%s,"fits":%s,"score":%s,%s' % (_name(verdict), fits, score, tail))
    return b"[" + b",".join(parts) + b"]"


def _name(verdict: NodeVerdict) -> bytes:
    return orjson.dumps(verdict.node)


def _tail(reference: Mapping[str, Any]) -> bytes:
    """The object after its node, fits and score: `"reasons":…,…}`."""
    keys = list(reference)
    if keys[:3] != ["node", "fits", "score"] or len(keys) < 4:
        raise ValueError(f"node objects must start with node, fits, score; got {keys[:3]}")
    return orjson.dumps({key: reference[key] for key in keys[3:]})[1:]
