"""Node verdicts encoded straight to JSON bytes, for answers of thousands of nodes.

A what-if answers for every node; on 5,000 nodes building a dict per verdict and
encoding the list took about as long as judging the scheduler-plugins nodes. Most
verdicts share everything but their node name and score (fits, no reasons, the same
notes), so the rest of each object is encoded once per distinct value and reused.

`encoded_shared` writes a whole what-if that way: rows the judgement knows to share a
tail (`SharedVerdicts`) are written from their name and score alone, and no verdict is
built for them but the first of each kind; the others' tails are encoded once per
distinct value.

Each node's `rules` (which rules judged it: they differ node by node, not by verdict) are
written per node too, as the id of its list in the answer's `rules` (`RuleSets`): the
lists themselves are a few hundred bytes, and written per node they doubled an answer.

The bytes are exactly `orjson.dumps([node_json(v, rule_sets.id_of(v.node)) for v in
verdicts])`; the tests hold them to it.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

import orjson

from scheduler_api.engine import NodeVerdict, SharedVerdicts

NAMES_KEPT = 100_000  # encoded node names kept between what-ifs
_NAMES: dict[str, bytes] = {}
NAME_LISTS_KEPT = 8  # the names of a few indexes (clusters, refreshed snapshots), encoded
_NAME_LISTS: dict[int, tuple[Sequence[str], list[bytes]]] = {}


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
        verdict.scheduler_fits,
        verdict.admission,
    )


NodeJSON = Callable[[NodeVerdict, str], Mapping[str, Any]]


class RuleSets:
    """The distinct lists of rules an answer's nodes were judged by, each with an id
    (`R1`, `R2`, ... numbered by the first row that had the list, so the same snapshot
    gives the same ids whatever the question, and a refresh keeps them): a node names
    its list by id.

    `codes`: each row's list as a number (0, 1, ... in order of first row); `distinct`:
    the lists by number (`WhatIfResult.rule_codes` keeps them worked out for its
    snapshot); `row_of`: a node name's row."""

    def __init__(
        self,
        codes: Sequence[int],
        distinct: Sequence[tuple[str, ...]],
        row_of: Callable[[str], int],
    ) -> None:
        self._codes = codes
        self._distinct = distinct
        self._row_of = row_of
        self._encoded = [orjson.dumps(f"R{code + 1}") for code in range(len(distinct))]

    def id_of(self, node: str) -> str:
        return f"R{self._codes[self._row_of(node)] + 1}"

    def encoded_ids(self) -> list[bytes]:
        """The id of every row's list, as a JSON string, by row."""
        encoded = self._encoded
        return [encoded[code] for code in self._codes]

    def as_json(self) -> dict[str, list[str]]:
        """Every list some row has, by id: the answer's `rules`."""
        used = set(self._codes)
        return {
            f"R{code + 1}": list(rules) for code, rules in enumerate(self._distinct) if code in used
        }


def encoded_shared(shared: SharedVerdicts, node_json: NodeJSON, rules: RuleSets) -> bytes:
    """The JSON array of `node_json(v, rules.id_of(v.node))` for every verdict of a
    what-if, in order, from `shared`.

    `node_json` gives the reference object. Its keys must start with node, fits, score
    and rules, which are encoded per node; the rest is encoded once per key or distinct
    value. The loop is written out: it runs once per node, 5,000 times a what-if."""
    own_tails: dict[tuple[Any, ...], bytes] = {}
    tails: dict[Any, bytes] = {}
    names, fits, scores, keys = (
        _encoded_names(shared.names),
        shared.fits,
        shared.scores,
        shared.keys,
    )
    parts = []
    append = parts.append
    rule_ids = rules.encoded_ids()
    for row in shared.order:
        key = keys[row]
        if key is None:
            append(_verdict_object(shared.verdict(row), node_json, own_tails, rule_ids[row]))
            continue
        tail = tails.get(key)
        if tail is None:  # the first row of its key: its tail may be another key's too
            tail = tails[key] = _verdict_tail(shared.verdict(row), node_json, own_tails)
        score = scores[row]
        append(
            b'{"node":%s,"fits":%s,"score":%s,"rules":%s,%s'
            % (
                names[row],
                b"true" if fits[row] else b"false",
                b"null" if score is None else b"%d" % score,
                rule_ids[row],
                tail,
            )
        )
    return b"[" + b",".join(parts) + b"]"


def _encoded_names(names: Sequence[str]) -> list[bytes]:
    """The JSON strings of `names`, kept for the same sequence (an index keeps its own)."""
    kept = _NAME_LISTS.get(id(names))
    if kept is not None and kept[0] is names:
        return kept[1]
    encoded = [_name(name) for name in names]
    if len(_NAME_LISTS) >= NAME_LISTS_KEPT:
        _NAME_LISTS.pop(next(iter(_NAME_LISTS), None), None)  # another thread may be here too
    _NAME_LISTS[id(names)] = (names, encoded)
    return encoded


def _verdict_object(
    verdict: NodeVerdict,
    node_json: NodeJSON,
    tails: dict[tuple[Any, ...], bytes],
    rules: bytes,
) -> bytes:
    tail = _verdict_tail(verdict, node_json, tails)
    return _object(verdict.node, verdict.fits, verdict.score, rules, tail)


def _verdict_tail(
    verdict: NodeVerdict, node_json: NodeJSON, tails: dict[tuple[Any, ...], bytes]
) -> bytes:
    """The verdict's tail, encoded once per distinct value in `tails` (its rules are
    not in the tail: they are the node's, not the verdict's)."""
    key = _tail_key(verdict)
    tail = tails.get(key)
    if tail is None:
        tail = tails[key] = _tail(node_json(verdict, ""))
    return tail


def _object(name: str, fits: bool, score: int | None, rules: bytes, tail: bytes) -> bytes:
    score_text = b"null" if score is None else b"%d" % score
    return b'{"node":%s,"fits":%s,"score":%s,"rules":%s,%s' % (
        _name(name),
        b"true" if fits else b"false",
        score_text,
        rules,
        tail,
    )


def _name(name: str) -> bytes:
    """The JSON string of a node name; names recur in every what-if, so they are kept."""
    encoded = _NAMES.get(name)
    if encoded is None:
        if len(_NAMES) >= NAMES_KEPT:
            _NAMES.clear()
        encoded = _NAMES[name] = orjson.dumps(name)
    return encoded


PER_NODE_KEYS = ["node", "fits", "score", "rules"]


def _tail(reference: Mapping[str, Any]) -> bytes:
    """The object after its node, fits, score and rules: `"scheduler_fits":…,…}`."""
    keys = list(reference)
    if keys[:4] != PER_NODE_KEYS or len(keys) < 5:
        raise ValueError(f"node objects must start with {', '.join(PER_NODE_KEYS)}; got {keys[:4]}")
    return orjson.dumps({key: reference[key] for key in keys[4:]})[1:]
