"""Numbers as people read them: cores from millicores, GiB from bytes."""

from __future__ import annotations

from collections.abc import Callable

GIB = 1024**3


def cores(millicores: int | None) -> str:
    """12000 → "12", 1500 → "1.5"; None → "n/p" (not published)."""
    if millicores is None:
        return "n/p"
    return f"{millicores / 1000:.3f}".rstrip("0").rstrip(".")


def gib(amount: int | None) -> str:
    if amount is None:
        return "n/p"
    return f"{amount / GIB:.1f} GiB"


def count(value: int | None) -> str:
    return "n/p" if value is None else str(value)


def formatter(resource: str) -> Callable[[int | None], str]:
    """The function that prints amounts of `resource` in the unit its name implies."""
    if resource == "cpu" or resource.endswith("batch-cpu"):
        return cores
    if resource == "memory" or resource.startswith("hugepages-") or resource.endswith("-memory"):
        return gib
    return count


def amount(resource: str, value: int | None) -> str:
    return formatter(resource)(value)


def scaled(resource: str, value: int) -> float:
    """The number a chart plots: cores, GiB or a count."""
    if resource == "cpu":
        return value / 1000
    if resource == "memory" or resource.startswith("hugepages-"):
        return round(value / GIB, 2)
    return float(value)


def unit(resource: str) -> str:
    if resource == "cpu":
        return "cores"
    if resource == "memory" or resource.startswith("hugepages-"):
        return "GiB"
    return "count"
