"""The Reservation options koord-scheduler reads (koordinator v1.8.0): parsed at the edge and
carried into the engine's ReservationSnapshot on both adapter paths."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import pytest

from scheduler_api.engine import PreAllocationMode
from topology.adapters.parts import reservation_option_fields
from topology.adapters.records import reservation_snapshot_of
from topology.parsers.errors import ObjectParseError
from topology.parsers.reservation import parse_reservation, parse_reservation_options

RESTRICTED = "scheduling.koordinator.sh/reservation-restricted-options"
ORDER = "scheduling.koordinator.sh/reservation-order"


def reservation(
    *, labels: dict[str, str] | None = None, annotations: dict[str, str] | None = None, **spec: Any
) -> dict[str, Any]:
    return {
        "apiVersion": "scheduling.koordinator.sh/v1alpha1",
        "kind": "Reservation",
        "metadata": {"name": "r", "uid": "u", "labels": labels or {},
                     "annotations": annotations or {}},
        "spec": {"owners": [{"labelSelector": {"matchLabels": {"app": "web"}}}],
                 "template": {"spec": {"containers": []}}, **spec},
        "status": {"phase": "Available", "nodeName": "n1", "allocatable": {"cpu": "4"}},
    }  # fmt: skip


@dataclass(frozen=True)
class OptionsCase:
    name: str
    obj: dict[str, Any]
    labels: dict[str, str] = field(default_factory=dict)
    restricted: str | None = None
    mode: str = ""
    multiple: bool = False


CASES = [
    OptionsCase("nothing set", reservation()),
    OptionsCase("the reservation-order label", reservation(labels={ORDER: "5"}), {ORDER: "5"}),
    OptionsCase(
        "restricted options kept raw, even malformed (the scheduler decides)",
        reservation(annotations={RESTRICTED: "{bad"}),
        restricted="{bad",
    ),
    OptionsCase(
        "pre-allocation policy",
        reservation(
            preAllocation=True, preAllocationPolicy={"mode": "Cluster", "enableMultiple": True}
        ),
        mode="Cluster",
        multiple=True,
    ),  # fmt: skip
]


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_reservation_options_are_parsed_and_carried(case: OptionsCase) -> None:
    record = parse_reservation(case.obj)
    assert record.options == parse_reservation_options(case.obj)
    snapshot = reservation_snapshot_of(record)
    assert dict(snapshot.labels) == case.labels
    assert snapshot.restricted_options == case.restricted
    assert snapshot.pre_allocation_mode == PreAllocationMode(case.mode)
    assert snapshot.pre_allocation_multiple is case.multiple
    assert snapshot.pre_allocation is bool(case.obj["spec"].get("preAllocation"))


def test_an_unknown_pre_allocation_mode_is_refused_with_the_field_named() -> None:
    with pytest.raises(ObjectParseError, match="preAllocationPolicy.mode"):
        parse_reservation(reservation(preAllocationPolicy={"mode": "Everywhere"}))


def test_stored_raw_that_no_longer_parses_gives_no_options() -> None:
    assert reservation_option_fields({"metadata": {"labels": "not a map"}}) == {}
    assert reservation_option_fields(reservation(labels={ORDER: "1"}))["labels"] == {ORDER: "1"}
