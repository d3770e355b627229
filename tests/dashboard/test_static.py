"""Plotly's JavaScript is one of our static files, found and collected without a CDN."""

from __future__ import annotations

from pathlib import Path

from django.conf import settings
from django.contrib.staticfiles import finders

from topology.staticfinders import STATIC_PATH, PlotlyFinder


def test_the_finder_serves_the_installed_plotly():
    found = finders.find(STATIC_PATH)
    assert found and found.endswith("plotly/package_data/plotly.min.js")
    assert PlotlyFinder().check() == []


def test_collectstatic_lists_it_under_its_prefix():
    [(path, storage)] = list(PlotlyFinder().list(None))
    assert f"{storage.prefix}/{path}" == STATIC_PATH


def test_no_template_loads_anything_from_another_host():
    for template in (Path(settings.BASE_DIR) / "templates").rglob("*.html"):
        text = template.read_text()
        assert "https://" not in text and "http://" not in text and "//cdn" not in text, template
