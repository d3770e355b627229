"""Template helpers for the dashboard: badges from choice colours, figures, units, ages."""

from __future__ import annotations

import json
from datetime import datetime
from functools import lru_cache

import plotly.graph_objects as go
from django import template
from django.utils import timezone
from django.utils.html import conditional_escape, format_html, format_html_join
from django.utils.safestring import SafeString, mark_safe

from topology.choices import (
    AllocationSource,
    ColouredChoices,
    CPUState,
    Flavour,
    QOSClass,
    ResctrlClass,
    ReservationPhase,
    TopologyManagerPolicy,
    TopologyManagerScope,
)
from topology.figures import fmt
from topology.figures.encode import figure_json
from topology.figures.palette import readable_text
from topology.selectors.types import NodeRow, ZoneCell

register = template.Library()

CHOICES: dict[str, type[ColouredChoices]] = {
    "flavour": Flavour,
    "policy": TopologyManagerPolicy,
    "scope": TopologyManagerScope,
    "phase": ReservationPhase,
    "source": AllocationSource,
    "qos": QOSClass,
    "resctrl": ResctrlClass,
    "cpu": CPUState,
}


def badge_html(text: str, colour: str, title: str = "") -> SafeString:
    return format_html(
        '<span class="badge" style="--badge:{};--badge-text:{}" title="{}">{}</span>',
        colour,
        readable_text(colour),
        title or text,
        text,
    )


@register.simple_tag
@lru_cache(maxsize=512)
def badge(kind: str, value: str, text: str = "") -> SafeString:
    """`{% badge "flavour" node.flavour %}`: the value as text, its colour, its label as title.

    Cached: a page of nodes repeats the same few badges hundreds of times.
    """
    choices = CHOICES[kind]
    if not value:
        return badge_html("—", choices.colour_of(""), f"no {kind}")
    label = choices(value).label if value in choices.values else value
    return badge_html(text or value, choices.colour_of(value), str(label))


@register.simple_tag
def colour_badge(text: str, colour: str, title: str = "") -> SafeString:
    return badge_html(text, colour, title)


@register.simple_tag
def figure(figures: dict[str, go.Figure], key: str, label: str) -> SafeString:
    """A chart container plus its figure as JSON; dashboard.js draws it.

    The container is a labelled image for assistive technology; the same facts are
    always in a table or text nearby.
    """
    fig = figures.get(key)
    if fig is None:
        return mark_safe("")
    return format_html(
        '<div class="chart" id="{}" data-figure="{}-data" role="img" aria-label="{}"></div>'
        '<script type="application/json" id="{}-data">{}</script>',
        key,
        key,
        label,
        key,
        mark_safe(figure_json(fig)),
    )


def _number(value: object) -> int | None:
    """Templates turn a missing attribute into ""; show that as "not published"."""
    return value if isinstance(value, int) else None


@register.filter
def cores(millicores: object) -> str:
    return fmt.cores(_number(millicores))


@register.filter
def gib(amount: object) -> str:
    return fmt.gib(_number(amount))


@register.filter
def amount(value: object, resource: str) -> str:
    return fmt.amount(resource, _number(value))


AGE_UNITS = (("d", 86400), ("h", 3600), ("min", 60))


@register.filter
def age(moment: datetime | None) -> str:
    """How long ago, e.g. "3 min ago"; "unknown" for None. (timesince is slow for 60 rows.)"""
    if moment is None:
        return "unknown"
    seconds = (timezone.now() - moment).total_seconds()
    for unit, size in AGE_UNITS:
        if seconds >= size:
            return f"{int(seconds // size)} {unit} ago"
    return "just now"


@register.simple_tag
def zone_cells(row: NodeRow) -> SafeString:
    """Free exclusive CPUs per zone of one overview row ("0: 22  1: ?"), with a title each."""
    return format_html_join(
        "",
        '<span class="zone" title="{}">{}:&nbsp;{}</span>',
        ((_zone_title(zone), zone.numa_id, _free_text(zone)) for zone in row.zones),
    )


def _free_text(zone: ZoneCell) -> str:
    return "?" if zone.free_exclusive_cpus is None else str(zone.free_exclusive_cpus)


def _zone_title(zone: ZoneCell) -> str:
    if zone.free_exclusive_cpus is None:
        return f"zone {zone.name}: not computed yet"
    allocatable = fmt.cores(zone.cpu.allocatable if zone.cpu else None)
    return f"zone {zone.name}: {zone.free_exclusive_cpus} free of {allocatable} allocatable"


@register.filter
def get_item(mapping: dict[object, object], key: object) -> object:
    return mapping.get(key) if mapping else None


@register.filter
def readable(colour: str) -> str:
    """The text colour that reads on `colour`."""
    return readable_text(colour)


@register.filter
def as_json(value: object) -> str:
    """Pretty JSON for the raw-object folds (autoescaped by the template)."""
    return json.dumps(value, indent=2, sort_keys=False, default=str)


@register.filter
def cpuset(text: object) -> SafeString:
    """A cpulist that wraps only after a comma, never inside a range ("0-/3")."""
    ranges = [conditional_escape(part) for part in str(text or "").split(",")]
    return mark_safe(",<wbr>".join(f'<span class="range">{part}</span>' for part in ranges))
