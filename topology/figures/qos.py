"""The L3 cache ways each QoS group may use, as koordlet computes them (formats.md §4.1).

One row per group (LSR, LS, BE) across the ways of the L3, each way numbered; the
ways both LS and BE may fill are drawn again in a hatched "LS ∩ BE" row, so that
where latency-sensitive and batch pods compete for cache is visible without
relying on colour. The MB setting is in each row's label.
"""

from __future__ import annotations

from collections.abc import Sequence

import plotly.graph_objects as go

from topology.choices import ResctrlClass
from topology.domain.resctrl import EffectiveClass, GroupSchemata, shared_ways
from topology.figures.palette import AXIS, base_layout, pattern

OVERLAP = "LS ∩ BE"
OVERLAP_COLOUR = "#d55e00"


def _row_label(schemata: GroupSchemata, effective: EffectiveClass) -> str:
    mb = "MB n/a" if schemata.mb_value is None else f"MB {schemata.mb_value}"
    state = "" if effective.enable else " (disabled)"
    return f"{schemata.group}{state} · {mb}"


def l3_ways(
    classes: Sequence[EffectiveClass], schemata: Sequence[GroupSchemata], ways: int
) -> go.Figure:
    by_class = {c.qos_class: c for c in classes}
    allowed = shared_ways(by_class, ways)
    traces = []
    labels = []
    for group in schemata:
        effective = by_class[group.qos_class]
        label = _row_label(group, effective)
        labels.append(label)
        used = sorted(allowed[group.group])
        colour = ResctrlClass(group.qos_class).colour
        traces.append(
            go.Bar(
                y=[label] * len(used),
                x=[1] * len(used),
                base=used,
                orientation="h",
                name=group.group,
                marker={"color": colour, "line": {"color": "#ffffff", "width": 1}},
                text=[str(way) for way in used],
                textposition="inside",
                hovertext=[
                    f"{group.group}: way {way} · {effective.start}–{effective.end} % → ways "
                    f"{group.start_way}–{(group.end_way or 0) - 1} · mask {group.l3_mask}"
                    for way in used
                ],
                hoverinfo="text",
            )
        )
    overlap = sorted(allowed["LS"] & allowed["BE"])
    if overlap:
        traces.append(
            go.Bar(
                y=[OVERLAP] * len(overlap),
                x=[1] * len(overlap),
                base=overlap,
                orientation="h",
                name="ways LS and BE share",
                marker={"color": OVERLAP_COLOUR, "pattern": pattern("x")},
                hovertext=[f"way {way}: LS and BE pods compete for it" for way in overlap],
                hoverinfo="text",
            )
        )
        labels.append(OVERLAP)
    layout = base_layout(
        height=70 + 34 * len(labels),
        barmode="overlay",
        showlegend=False,
        margin={"l": 150, "r": 10, "t": 10, "b": 36},
        meta={"kind": "l3-ways", "ways": ways, "overlap": overlap},
        xaxis={
            "range": [0, max(ways, 1)],
            "dtick": 1,
            "title": {"text": f"L3 way (of {ways})"},
            "color": AXIS,
        },
        yaxis={"categoryorder": "array", "categoryarray": labels[::-1], "color": AXIS},
    )
    return go.Figure(data=traces, layout=layout)
