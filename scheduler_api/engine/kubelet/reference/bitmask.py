"""A tiny immutable NUMA bitmask, the Python twin of kubelet's ``bitmask.BitMask``.

Bit ``i`` set means NUMA node ``i`` is part of the affinity. Like kubelet's
``uint64`` mask, only bits 0-63 exist. Every operation returns a new mask; the
type is hashable so masks can be set members and dict keys.

Ordering rules are kubelet's (``bitmask.go``):

* ``is_narrower_than``: fewer bits set wins; on a tie the mask with the smaller
  integer value (more low-numbered bits) wins.
* ``is_less_than`` / ``is_greater_than`` compare the integer values.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from itertools import combinations

MAX_BITS = 64


def _check_bit(bit: int) -> int:
    if not 0 <= bit < MAX_BITS:
        raise ValueError(f"NUMA node id {bit} is outside the bitmask range 0-{MAX_BITS - 1}")
    return bit


@dataclass(frozen=True, slots=True)
class NUMAMask:
    """An immutable set of NUMA node ids stored as one integer (bit i = node i)."""

    value: int = 0

    def __post_init__(self) -> None:
        if not 0 <= self.value < 1 << MAX_BITS:
            raise ValueError(f"bitmask value {self.value} does not fit in {MAX_BITS} bits")

    @classmethod
    def of(cls, nodes: Iterable[int]) -> NUMAMask:
        """Build a mask from node ids; ``ValueError`` for ids outside 0-63. O(n)."""
        value = 0
        for node in nodes:
            value |= 1 << _check_bit(node)
        return cls(value)

    @property
    def bits(self) -> tuple[int, ...]:
        """The set node ids, ascending. O(64)."""
        return tuple(i for i in range(MAX_BITS) if self.value >> i & 1)

    def count(self) -> int:
        """Number of bits set. O(1)."""
        return self.value.bit_count()

    def is_empty(self) -> bool:
        return self.value == 0

    def is_set(self, bit: int) -> bool:
        """True when ``bit`` is set; out-of-range bits are never set (as kubelet)."""
        return 0 <= bit < MAX_BITS and bool(self.value >> bit & 1)

    def any_set(self, bits: Iterable[int]) -> bool:
        return any(self.is_set(bit) for bit in bits)

    def is_narrower_than(self, other: NUMAMask) -> bool:
        """Fewer bits wins; equal counts fall back to the smaller value."""
        if self.count() == other.count():
            return self.is_less_than(other)
        return self.count() < other.count()

    def is_less_than(self, other: NUMAMask) -> bool:
        return self.value < other.value

    def is_greater_than(self, other: NUMAMask) -> bool:
        return self.value > other.value

    def __and__(self, other: NUMAMask) -> NUMAMask:
        return NUMAMask(self.value & other.value)

    def __or__(self, other: NUMAMask) -> NUMAMask:
        return NUMAMask(self.value | other.value)

    def __iter__(self) -> Iterator[int]:
        return iter(self.bits)

    def __len__(self) -> int:
        return self.count()

    def to_frozenset(self) -> frozenset[int]:
        return frozenset(self.bits)

    def add(self, *bits: int) -> NUMAMask:
        """A copy with ``bits`` also set; ``ValueError`` (mask unchanged) when out of range."""
        return self | NUMAMask.of(bits)

    def remove(self, *bits: int) -> NUMAMask:
        """A copy with ``bits`` cleared; ``ValueError`` when out of range."""
        return NUMAMask(self.value & ~NUMAMask.of(bits).value)

    def __str__(self) -> str:
        """Binary digits, lowest bit rightmost, padded exactly as kubelet's ``String()``."""
        for shift in range(MAX_BITS - 2, 0, -2):
            if self.value > 1 << shift:
                return format(self.value, f"0{shift + 2}b")
        return format(self.value, "02b")


def and_all(first: NUMAMask, *others: NUMAMask) -> NUMAMask:
    """Bitwise AND of every mask given. O(len(others))."""
    value = first.value
    for mask in others:
        value &= mask.value
    return NUMAMask(value)


def iterate_masks(nodes: Iterable[int]) -> Iterator[NUMAMask]:
    """Every non-empty subset of ``nodes`` as a mask, smallest subsets first.

    Within one size, subsets come in lexicographic order of the ascending node
    list, as kubelet's ``IterateBitMasks`` does when given sorted ids.
    O(2^n) masks for n nodes.
    """
    ordered = sorted(set(nodes))
    for size in range(1, len(ordered) + 1):
        for subset in combinations(ordered, size):
            yield NUMAMask.of(subset)
