"""Linux cpulist strings ("0-3,8,10-11") to and from sets of CPU ids."""

from __future__ import annotations

from collections.abc import Iterable


def format_cpulist(cpus: Iterable[int]) -> str:
    ordered = sorted(set(cpus))
    ranges: list[str] = []
    start = previous = None
    for cpu in ordered:
        if previous is not None and cpu == previous + 1:
            previous = cpu
            continue
        if start is not None:
            ranges.append(_range_text(start, previous))
        start = previous = cpu
    if start is not None:
        ranges.append(_range_text(start, previous))
    return ",".join(ranges)


def _range_text(start: int, end: int | None) -> str:
    return str(start) if end in (None, start) else f"{start}-{end}"


def parse_cpulist(text: str) -> frozenset[int]:
    """ValueError on anything that is not a well-formed cpulist; "" is the empty set."""
    cpus: set[int] = set()
    for part in filter(None, (chunk.strip() for chunk in text.split(","))):
        low, _, high = part.partition("-")
        first, last = int(low), int(high) if high else int(low)
        if first < 0 or last < first:
            raise ValueError(f"bad cpulist range {part!r}")
        cpus.update(range(first, last + 1))
    return frozenset(cpus)
