"""Which ResourceSlices of a DRA pool count: the rule every reader of slices shares.

kubernetes staging/src/k8s.io/api/resource/v1/types.go (ResourcePool.Generation): "a
consumer must only use ResourceSlices with the highest generation number and ignore all
others". A pool is one driver's: (driver, pool name).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TypeVar

T = TypeVar("T")


def newest_generation(
    items: Sequence[T], pool: Callable[[T], tuple[str, str]], generation: Callable[[T], int]
) -> list[T]:
    """`items` (devices or slices) of the newest generation of their pool, in order."""
    newest: dict[tuple[str, str], int] = {}
    for item in items:
        key = pool(item)
        newest[key] = max(newest.get(key, generation(item)), generation(item))
    return [item for item in items if generation(item) == newest[pool(item)]]
