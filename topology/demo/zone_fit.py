"""Placing an amount of resources on NUMA zones: whole in one zone, or spread over several."""

from __future__ import annotations

from collections.abc import Sequence

from .ledger import ZoneLedger

ZoneShares = dict[int, dict[str, int]]


def first_fitting_zone(zones: Sequence[ZoneLedger], amounts: dict[str, int]) -> ZoneLedger | None:
    return next((zone for zone in zones if zone.fits(amounts)), None)


def spread_over(zones: Sequence[ZoneLedger], amounts: dict[str, int]) -> ZoneShares | None:
    """Fill zones in the given order, each resource independently; None if it cannot fit.

    CPUs stay whole per zone (millicores are only split at core boundaries).
    """
    shares: ZoneShares = {}
    for name, needed in amounts.items():
        for zone in zones:
            if needed <= 0:
                break
            room = zone.free(name) - shares.get(zone.index, {}).get(name, 0)
            if name == "cpu":
                room -= room % 1000
            take = min(room, needed)
            if take > 0:
                shares.setdefault(zone.index, {})[name] = (
                    shares.get(zone.index, {}).get(name, 0) + take
                )
                needed -= take
        if needed > 0:
            return None
    return shares


def hold_shares(zones: Sequence[ZoneLedger], shares: ZoneShares, sign: int = 1) -> None:
    by_index = {zone.index: zone for zone in zones}
    for index, amounts in shares.items():
        by_index[index].hold({name: sign * value for name, value in amounts.items()})


def merge_shares(total: ZoneShares, extra: ZoneShares) -> None:
    for index, amounts in extra.items():
        bucket = total.setdefault(index, {})
        for name, value in amounts.items():
            bucket[name] = bucket.get(name, 0) + value
