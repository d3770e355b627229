"""Colours the figures share: the free-share scale and one colour per pod."""

from __future__ import annotations

from topology.choices import CPUState

# Free share of a zone, 0 (nothing free) → 1 (all free): light to dark blue, so that
# the zones with room stand out; the number in each cell says the same in text.
FREE_SCALE = (
    (0.0, "#f7fbff"),
    (0.25, "#c6dbef"),
    (0.5, "#6baed6"),
    (0.75, "#2171b5"),
    (1.0, "#08306b"),
)
NOT_COMPUTED = "#d9dde3"
AXIS = "#5b6472"
GRID = "#e5e8ed"
FONT = "system-ui, -apple-system, Segoe UI, Roboto, sans-serif"

# Pods get these in turn (Tableau 20 minus its greys and its amber, which mean
# "reserved" and "held by a Reservation"); the cell's code tells pods apart when
# colours repeat.
POD_COLOURS = (
    "#1f77b4",
    "#ff7f0e",
    "#2ca02c",
    "#d62728",
    "#9467bd",
    "#8c564b",
    "#e377c2",
    "#17becf",
    "#aec7e8",
    "#ffbb78",
    "#98df8a",
    "#ff9896",
    "#c5b0d5",
    "#c49c94",
    "#f7b6d2",
    "#9edae5",
    "#393b79",
    "#637939",
    "#843c39",
    "#7b4173",
)
assert not {CPUState.RESERVATION.colour, CPUState.RESERVED.colour} & set(POD_COLOURS)


def pod_colour(index: int) -> str:
    return POD_COLOURS[index % len(POD_COLOURS)]


def readable_text(background: str) -> str:
    """Black or white, whichever reads better on `background` (#rrggbb), by WCAG luminance."""
    red, green, blue = (int(background[i : i + 2], 16) / 255 for i in (1, 3, 5))

    def linear(channel: float) -> float:
        return channel / 12.92 if channel <= 0.03928 else ((channel + 0.055) / 1.055) ** 2.4

    luminance = 0.2126 * linear(red) + 0.7152 * linear(green) + 0.0722 * linear(blue)
    return "#111827" if luminance > 0.179 else "#ffffff"


# A small template of our own: plotly's named templates are deep-copied into every
# figure, which costs more than building the figure itself.
TEMPLATE = {
    "layout": {
        "xaxis": {"gridcolor": GRID, "zeroline": False, "linecolor": GRID, "automargin": True},
        "yaxis": {"gridcolor": GRID, "zeroline": False, "linecolor": GRID, "automargin": True},
        "colorway": list(POD_COLOURS[:10]),
    }
}


def pattern(shape: str | list[str]) -> dict[str, object]:
    """A bar hatch drawn over the bar's own colour (plotly's default replaces the colour)."""
    return {
        "shape": shape,
        "fillmode": "overlay",
        "fgcolor": "#ffffff",
        "size": 7,
        "solidity": 0.35,
    }


def base_layout(**overrides: object) -> dict[str, object]:
    """Dense, quiet defaults every dashboard figure starts from."""
    layout: dict[str, object] = {
        "template": TEMPLATE,
        "font": {"family": FONT, "size": 12, "color": "#1d2430"},
        "margin": {"l": 10, "r": 10, "t": 30, "b": 10},
        "hoverlabel": {"font": {"family": FONT, "size": 12}, "align": "left"},
        "paper_bgcolor": "#ffffff",
        "plot_bgcolor": "#ffffff",
    }
    layout.update(overrides)
    return layout
