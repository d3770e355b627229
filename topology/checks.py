"""System checks: the vendored plotly.js bundle matches the plotly package's.

The dashboard loads plotly.js's cartesian bundle (heatmaps, bars and scatter: all its
figures use), a third of the full bundle's size, from our static files. The figures are
built by the plotly package for the plotly.js version it ships; a different bundle
version may miss what they use, so `manage.py check` says when they differ.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from django.conf import settings
from django.core.checks import CheckMessage, Error, Warning, register
from plotly.offline import get_plotlyjs_version

BUNDLE = Path("topology/vendor/plotly-cartesian.min.js")
_VERSION = re.compile(r"plotly\.js \(cartesian - minified\) v(\d+\.\d+\.\d+)")


def bundle_version(path: Path) -> str | None:
    found = _VERSION.search(path.read_text(encoding="utf-8", errors="replace")[:400])
    return found.group(1) if found else None


@register()
def plotly_bundle_matches(app_configs: Any = None, **kwargs: Any) -> list[CheckMessage]:
    path = Path(settings.BASE_DIR) / "static" / BUNDLE
    if not path.is_file():
        return [Error(f"{path} is missing: the dashboard cannot draw", id="topology.E001")]
    vendored, shipped = bundle_version(path), get_plotlyjs_version()
    if vendored != shipped:
        return [
            Warning(
                f"{BUNDLE} is plotly.js {vendored}, the plotly package builds figures for "
                f"{shipped}: replace it with plotly.js-cartesian-dist-min@{shipped}",
                id="topology.W001",
            )
        ]
    return []
