"""NUMAMask against kubelet's bitmask_test.go tables (ported as data)."""

from __future__ import annotations

import pytest

from scheduler_api.engine.kubelet.reference.bitmask import NUMAMask, and_all, iterate_masks

ALL_ONES = "1" * 64


@pytest.mark.parametrize(
    ("bits", "text"),
    [
        pytest.param((), "00", id="new-empty-bitmask"),
        pytest.param((0,), "01", id="bit-0-set"),
        pytest.param((1,), "10", id="bit-1-set"),
        pytest.param((0, 1), "11", id="bits-0-and-1-set"),
        pytest.param((2,), "100", id="power-of-four-keeps-kubelets-odd-width"),
        pytest.param(tuple(range(64)), ALL_ONES, id="filled-mask"),
    ],
)
def test_new_mask_prints_like_kubelet(bits: tuple[int, ...], text: str) -> None:
    assert str(NUMAMask.of(bits)) == text


@pytest.mark.parametrize("bits", [(-1,), (64,), (0, 64)], ids=["minus-one", "sixty-four", "mixed"])
def test_bits_outside_0_63_are_refused(bits: tuple[int, ...]) -> None:
    with pytest.raises(ValueError, match="outside the bitmask range 0-63"):
        NUMAMask.of(bits)
    with pytest.raises(ValueError):
        NUMAMask().add(*bits)


@pytest.mark.parametrize(
    ("initial", "removed", "text"),
    [
        pytest.param((0,), (0,), "00", id="set-0-remove-0"),
        pytest.param((0, 1), (1,), "01", id="set-0-1-remove-1"),
        pytest.param((0, 1), (0, 1), "00", id="set-0-1-remove-both"),
    ],
)
def test_remove(initial: tuple[int, ...], removed: tuple[int, ...], text: str) -> None:
    assert str(NUMAMask.of(initial).remove(*removed)) == text


@pytest.mark.parametrize(
    ("masks", "and_text", "or_text"),
    [
        pytest.param([(0, 1), (0, 1)], "11", "11", id="11-with-11"),
        pytest.param([(0, 1), (1,)], "10", "11", id="11-with-10"),
        pytest.param([(0,), (0, 1)], "01", "11", id="01-with-11"),
        pytest.param([(0, 1), (0, 1), (1,)], "10", "11", id="11-11-10"),
        pytest.param([(0,), (0,), (1,), (0, 1)], "00", "11", id="01-01-10-11"),
        pytest.param(
            [(0, 1, 2, 3), (1, 2, 3), (2, 3), (3,)], "1000", "1111", id="1111-1110-1100-1000"
        ),
        pytest.param([(0,), ()], "00", "01", id="01-with-00"),
    ],
)
def test_and_or(masks: list[tuple[int, ...]], and_text: str, or_text: str) -> None:
    built = [NUMAMask.of(m) for m in masks]
    assert str(and_all(built[0], *built)) == and_text
    union = NUMAMask()
    for mask in built:
        union = union | mask
    assert str(union) == or_text


@pytest.mark.parametrize(
    ("bits", "empty", "count", "listed"),
    [
        pytest.param((), True, 0, (), id="mask-00"),
        pytest.param((0,), False, 1, (0,), id="mask-01"),
        pytest.param((0, 1), False, 2, (0, 1), id="mask-11"),
    ],
)
def test_is_empty_count_and_bits(
    bits: tuple[int, ...], empty: bool, count: int, listed: tuple[int, ...]
) -> None:
    mask = NUMAMask.of(bits)
    assert (mask.is_empty(), mask.count(), mask.bits) == (empty, count, listed)
    assert len(mask) == count and tuple(mask) == listed and mask.to_frozenset() == set(listed)


@pytest.mark.parametrize(
    ("bits", "check", "expected"),
    [
        pytest.param((), 0, False, id="bit-0-in-00"),
        pytest.param((0,), 0, True, id="bit-0-in-01"),
        pytest.param((0, 1), 1, True, id="bit-1-in-11"),
        pytest.param((0, 1), 64, False, id="bit-outside-range"),
    ],
)
def test_is_set(bits: tuple[int, ...], check: int, expected: bool) -> None:
    assert NUMAMask.of(bits).is_set(check) is expected


@pytest.mark.parametrize(
    ("bits", "checks", "expected"),
    [
        pytest.param((), (0, 1), False, id="11-in-00"),
        pytest.param((0,), (0, 1), True, id="11-in-01"),
        pytest.param((0, 1), (0, 1), True, id="11-in-11"),
        pytest.param((0, 1), (64, 65), False, id="outside-range"),
        pytest.param((1, 2), (0, 3), False, id="1001-in-0110"),
    ],
)
def test_any_set(bits: tuple[int, ...], checks: tuple[int, ...], expected: bool) -> None:
    assert NUMAMask.of(bits).any_set(checks) is expected


@pytest.mark.parametrize(
    ("first", "second", "equal"),
    [
        pytest.param((), (), True, id="00-00"),
        pytest.param((), (0,), False, id="00-01"),
        pytest.param((0,), (0,), True, id="01-01"),
        pytest.param((0,), (1,), False, id="01-10"),
        pytest.param((0, 1), (0, 1), True, id="11-11"),
    ],
)
def test_is_equal(first: tuple[int, ...], second: tuple[int, ...], equal: bool) -> None:
    assert (NUMAMask.of(first) == NUMAMask.of(second)) is equal


@pytest.mark.parametrize(
    ("first", "second", "narrower"),
    [
        pytest.param((0,), (0, 1), True, id="unequal-bits-1-of-2"),
        pytest.param((0, 1), (0,), False, id="unequal-bits-2-of-2"),
        pytest.param((0,), (1,), True, id="equal-bits-1-of-2"),
        pytest.param((1,), (0,), False, id="equal-bits-2-of-2"),
    ],
)
def test_is_narrower_than(first: tuple[int, ...], second: tuple[int, ...], narrower: bool) -> None:
    assert NUMAMask.of(first).is_narrower_than(NUMAMask.of(second)) is narrower


@pytest.mark.parametrize("numbits", [1, 2, 4, 8, 16])
def test_iterate_masks_yields_every_non_empty_subset_once(numbits: int) -> None:
    masks = list(iterate_masks(range(numbits)))
    assert len(masks) == len(set(masks)) == (1 << numbits) - 1


def test_iterate_masks_goes_narrowest_first_then_lexicographic() -> None:
    order = [m.bits for m in iterate_masks([2, 0, 1])]
    assert order == [(0,), (1,), (2,), (0, 1), (0, 2), (1, 2), (0, 1, 2)]


def test_masks_are_immutable_values() -> None:
    mask = NUMAMask.of([0])
    assert mask.add(1) == NUMAMask.of([0, 1]) and mask == NUMAMask.of([0])
    assert hash(mask) == hash(NUMAMask.of([0]))
    with pytest.raises(AttributeError):
        mask.value = 3  # type: ignore[misc]
