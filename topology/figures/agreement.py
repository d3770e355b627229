"""The Agreement page's figure: each system's agreement rate after each audit."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import plotly.graph_objects as go

from topology.figures.palette import AXIS, base_layout, pod_colour


def agree_percent(rate: Mapping[str, int]) -> float | None:
    """Agreeing pods in percent of the judged ones; None when none was judged."""
    judged = rate.get("judged", 0)
    return 100 * rate.get("agree", 0) / judged if judged else None


def rate_history(samples: Sequence[Mapping[str, Any]]) -> go.Figure:
    """One line per system: the share of judged pods that agree, after each audit."""
    systems = sorted({system for sample in samples for system in sample["rates"]})
    traces = []
    for index, system in enumerate(systems):
        points = [
            (sample["taken_at"], agree_percent(sample["rates"][system]),
             sample["rates"][system])
            for sample in samples
            if system in sample["rates"] and sample["rates"][system].get("judged")
        ]  # fmt: skip
        if not points:
            continue
        traces.append(
            go.Scatter(
                x=[p[0] for p in points],
                y=[p[1] for p in points],
                mode="lines+markers",
                name=system,
                line={"color": pod_colour(index)},
                hovertext=[f"{system}: {p[2]['agree']} of {p[2]['judged']} agree" for p in points],
                hoverinfo="text+x",
            )
        )
    layout = base_layout(
        height=260,
        meta={"kind": "agreement-history", "systems": systems},
        showlegend=True,
        legend={"orientation": "h", "y": 1.08, "x": 0},
        yaxis={"title": "agree (% of judged pods)", "range": [0, 100], "color": AXIS},
        xaxis={"color": AXIS},
        margin={"l": 60, "r": 10, "t": 30, "b": 40},
    )
    return go.Figure(data=traces, layout=layout)
