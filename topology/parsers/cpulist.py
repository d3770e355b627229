"""Linux cpulists ("0-3,8,10-11"), parsed and printed canonically."""

from __future__ import annotations

import re
import threading
from collections.abc import Iterable

from topology.parsers.errors import FieldError

MAX_CPU_ID = 65535
# Bounds that keep any text quick to refuse (issue 28): a real cpulist, even of every
# other CPU up to MAX_CPU_ID, is far shorter, and its ranges do not overlap much.
MAX_CPULIST_CHARS = 64 * 1024
MAX_NAMED_CPUS = 4 * (MAX_CPU_ID + 1)


def parse_cpulist(text: object) -> frozenset[int]:
    """Parse a cpulist as Go's cpuset.Parse does; the empty string is the empty set.

    Go splits on commas and dashes and reads each bound with strconv.Atoi, so it
    refuses what Python's int() would forgive: spaces, underscores, empty elements.
    """
    if not isinstance(text, str):
        raise FieldError(f"expected a cpulist string, got {type(text).__name__}")
    found = _MEMO.get(text)
    if found is None:
        found = _parse_cpulist_text(text)
        _remember(text, found)
    return found


# Memoised beside the parser (results are immutable): the pods and pools of a cluster
# repeat a limited set of cpusets, and a cold resync reads tens of thousands of them.
# Bounded by bytes, not only entries: only sets of at most MEMO_MAX_CPUS are kept (a set
# of 65,536 CPUs is megabytes), so the memo never holds more than about 20 MB.
MEMO_ENTRIES = 1024
MEMO_MAX_CPUS = 512
_MEMO: dict[str, frozenset[int]] = {}
_MEMO_LOCK = threading.Lock()


def _remember(text: str, cpus: frozenset[int]) -> None:
    if len(cpus) > MEMO_MAX_CPUS or len(text) > 8 * MEMO_MAX_CPUS:
        return
    with _MEMO_LOCK:
        while len(_MEMO) >= MEMO_ENTRIES:
            del _MEMO[next(iter(_MEMO))]  # the oldest first
        _MEMO[text] = cpus


def _parse_cpulist_text(text: str) -> frozenset[int]:
    if not text:
        return frozenset()
    if len(text) > MAX_CPULIST_CHARS:
        raise FieldError(f"a cpulist of {len(text)} characters is too long")
    cpus: set[int] = set()
    named = 0
    for part in text.split(","):
        cpus_of_part = _parse_range(part, text)
        named += len(cpus_of_part)
        if named > MAX_NAMED_CPUS:
            raise FieldError(f"{_shown(text)} names over {MAX_NAMED_CPUS} CPUs (ranges repeat)")
        cpus.update(cpus_of_part)
    return frozenset(cpus)


# What strconv.Atoi takes once a range is split on "-" (20 digits: past int64 Go fails too)
_BOUND = re.compile(r"\+?[0-9]{1,20}")


def _parse_range(part: str, text: str) -> range:
    first, sep, last = part.partition("-")
    if not _BOUND.fullmatch(first) or (sep and not _BOUND.fullmatch(last)):
        detail = "an empty element" if not part else f"{_shown(part)} is not a number or range"
        raise FieldError(f"{_shown(text)} is not a cpulist ({detail})")
    start = int(first)
    end = int(last) if sep else start
    if end < start or end > MAX_CPU_ID:
        raise FieldError(f"{_shown(text)} is not a cpulist ({part!r} is not an increasing range)")
    return range(start, end + 1)


def _shown(text: str) -> str:
    """The text for a message: whole when short, its start otherwise."""
    return repr(text) if len(text) <= 80 else f"{text[:60]!r}… ({len(text)} characters)"


def format_cpulist(cpus: Iterable[int]) -> str:
    """The canonical form: sorted, runs of consecutive ids collapsed ("0-3,8,10-11")."""
    ordered = sorted(set(cpus))
    parts: list[str] = []
    index = 0
    while index < len(ordered):
        start = ordered[index]
        while index + 1 < len(ordered) and ordered[index + 1] == ordered[index] + 1:
            index += 1
        end = ordered[index]
        parts.append(str(start) if start == end else f"{start}-{end}")
        index += 1
    return ",".join(parts)
