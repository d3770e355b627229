"""A figure as JSON that is safe inside `<script type="application/json">`."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

import plotly.graph_objects as go
import plotly.io as pio
from django.core.serializers.json import DjangoJSONEncoder

# The characters that could close the script element or start an HTML comment,
# escaped the way django.utils.html.json_script does.
_SCRIPT_ESCAPES = {ord(">"): "\\u003E", ord("<"): "\\u003C", ord("&"): "\\u0026"}

PLOT_CONFIG: dict[str, Any] = {
    "displaylogo": False,
    "responsive": True,
    "modeBarButtonsToRemove": ["select2d", "lasso2d", "autoScale2d"],
    "toImageButtonOptions": {"format": "png", "scale": 2},
}


def figure_json(figure: go.Figure) -> str:
    """Compact JSON of the figure (numpy-aware), escaped for an HTML script element."""
    text = pio.to_json(figure, validate=False, pretty=False, remove_uids=True)
    return text.translate(_SCRIPT_ESCAPES)


def payload_json(figures: Mapping[str, go.Figure], data: Mapping[str, Any]) -> str:
    """`{"figures": {id: figure}, "data": {...}}` for the endpoints live refresh polls.

    Figures are spliced in as already-encoded JSON rather than decoded and encoded again.
    """
    encoded = ",".join(f"{json.dumps(key)}:{figure_json(fig)}" for key, fig in figures.items())
    extra = json.dumps(data, cls=DjangoJSONEncoder).translate(_SCRIPT_ESCAPES)
    return f'{{"figures":{{{encoded}}},"data":{extra}}}'
