"""Koordinator Reservations: the list and one in full."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from django.shortcuts import get_object_or_404
from django.utils import timezone
from django.utils.dateparse import parse_datetime

from topology.choices import ReservationPhase
from topology.filtersets import ReservationFilterSet
from topology.models import Cluster, Reservation


@dataclass(frozen=True)
class Condition:
    type: str
    status: str
    reason: str
    message: str
    changed: str


@dataclass(frozen=True)
class ReservationRow:
    reservation: Reservation
    owners: tuple[str, ...]
    current_owners: tuple[str, ...]
    expires_at: datetime | None
    expiry_rule: str

    @property
    def phase(self) -> ReservationPhase:
        return ReservationPhase(self.reservation.phase)

    @property
    def lapsed(self) -> bool:
        return is_lapsed(self.reservation.phase, self.expires_at)


LIVE_PHASES = (ReservationPhase.AVAILABLE, ReservationPhase.PENDING, ReservationPhase.WAITING)


def is_lapsed(phase: str, expires_at: datetime | None) -> bool:
    """Past its expiry while its status still says it holds resources: Koordinator's
    controller marks it Failed (reason Expired) on its next pass; never show it as
    available meanwhile."""
    return phase in LIVE_PHASES and expires_at is not None and expires_at <= timezone.now()


def expires_at_of(reservation: Reservation) -> datetime | None:
    """When `reservation` expires (`expiry`, from its own creation time)."""
    return expiry(reservation, created_at(reservation))[0]


def reservations(cluster: Cluster, params: Mapping[str, str]) -> ReservationFilterSet:
    """The cluster's Reservations filtered and sorted as `params` ask (by name unless told)."""
    # raw is read for the creation time that a TTL counts from (a cluster has a few
    # thousand Reservations at most)
    queryset = Reservation.objects.filter(cluster=cluster).select_related("node")
    return ReservationFilterSet(params or None, queryset=queryset.order_by("name"))


def reservation_rows(items: Sequence[Reservation]) -> list[ReservationRow]:
    return [reservation_row(r) for r in items]


def reservation_row(reservation: Reservation, created: datetime | None = None) -> ReservationRow:
    created = created or created_at(reservation)
    expires_at, rule = expiry(reservation, created)
    return ReservationRow(
        reservation,
        tuple(owner_text(owner) for owner in reservation.owners or ()),
        tuple(_object_ref(ref) for ref in reservation.current_owners or ()),
        expires_at,
        rule,
    )


def reservation_detail(cluster: Cluster, name: str) -> tuple[ReservationRow, list[Condition]]:
    reservation = get_object_or_404(
        Reservation.objects.filter(cluster=cluster).select_related("node"), name=name
    )
    return reservation_row(reservation), conditions(reservation.raw or {})


def created_at(reservation: Reservation) -> datetime | None:
    metadata = (reservation.raw or {}).get("metadata") or {}
    return parse_datetime(str(metadata.get("creationTimestamp") or ""))


def expiry(reservation: Reservation, created: datetime | None) -> tuple[datetime | None, str]:
    """Koordinator checks `expires` first, then `ttl` from creation; 0 or none: never."""
    if reservation.expires is not None:
        return reservation.expires, "expires"
    if not reservation.ttl_seconds:
        return None, "never expires"
    text = _duration(reservation.ttl_seconds)
    if created is None:
        return None, f"ttl {text} from creation"
    return created + timedelta(seconds=reservation.ttl_seconds), f"ttl {text}"


def _duration(seconds: int) -> str:
    hours, rest = divmod(seconds, 3600)
    minutes, secs = divmod(rest, 60)
    parts = zip((hours, minutes, secs), "hms", strict=True)
    return "".join(f"{value}{unit}" for value, unit in parts if value) or "0s"


def _object_ref(ref: Mapping[str, Any]) -> str:
    namespace = ref.get("namespace")
    kind = ref.get("kind") or "object"
    name = ref.get("name") or ref.get("uid") or "?"
    return f"{kind} {namespace}/{name}" if namespace else f"{kind} {name}"


def _selector_text(selector: Mapping[str, Any]) -> str:
    parts = [f"{k}={v}" for k, v in sorted((selector.get("matchLabels") or {}).items())]
    for expression in selector.get("matchExpressions") or ():
        values = ",".join(expression.get("values") or ())
        parts.append(f"{expression.get('key')} {expression.get('operator')} ({values})".strip())
    return ", ".join(parts) or "everything"


def owner_text(owner: Mapping[str, Any]) -> str:
    """One spec.owners entry; its parts are ANDed."""
    parts = []
    if owner.get("object"):
        parts.append(f"object {_object_ref(owner['object'])}")
    if owner.get("controller"):
        parts.append(f"controller {_object_ref(owner['controller'])}")
    if owner.get("labelSelector") is not None:
        parts.append(f"labels {_selector_text(owner['labelSelector'])}")
    return " and ".join(parts) or "nothing"


def conditions(raw: Mapping[str, Any]) -> list[Condition]:
    return [
        Condition(
            str(c.get("type", "")),
            str(c.get("status", "")),
            str(c.get("reason", "")),
            str(c.get("message", "")),
            str(c.get("lastTransitionTime", "")),
        )
        for c in (raw.get("status") or {}).get("conditions") or ()
    ]
