"""Linux cpulists ("0-3,8,10-11"), parsed and printed canonically."""

from __future__ import annotations

import re
from collections.abc import Iterable
from functools import lru_cache

from topology.parsers.errors import FieldError

MAX_CPU_ID = 65535


def parse_cpulist(text: object) -> frozenset[int]:
    """Parse a cpulist as Go's cpuset.Parse does; the empty string is the empty set.

    Go splits on commas and dashes and reads each bound with strconv.Atoi, so it
    refuses what Python's int() would forgive: spaces, underscores, empty elements.
    """
    if not isinstance(text, str):
        raise FieldError(f"expected a cpulist string, got {type(text).__name__}")
    return _parse_cpulist_text(text)


@lru_cache(maxsize=1024)
def _parse_cpulist_text(text: str) -> frozenset[int]:
    """Memoised (the result is immutable): the pods and pools of a cluster repeat a
    limited set of cpusets, and a cold resync reads tens of thousands of them. The
    bound keeps the cache at a few MB even if every entry were a 384-CPU set."""
    if not text:
        return frozenset()
    cpus: set[int] = set()
    for part in text.split(","):
        cpus.update(_parse_range(part, text))
    return frozenset(cpus)


_BOUND = re.compile(r"\+?[0-9]+")  # what strconv.Atoi takes once a range is split on "-"


def _parse_range(part: str, text: str) -> range:
    first, sep, last = part.partition("-")
    if not _BOUND.fullmatch(first) or (sep and not _BOUND.fullmatch(last)):
        detail = "an empty element" if not part else f"{part!r} is not a number or range"
        raise FieldError(f"{text!r} is not a cpulist ({detail})")
    start = int(first)
    end = int(last) if sep else start
    if end < start or end > MAX_CPU_ID:
        raise FieldError(f"{text!r} is not a cpulist ({part!r} is not an increasing range)")
    return range(start, end + 1)


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
