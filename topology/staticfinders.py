"""Serve plotly.min.js from the installed plotly package as one of our static files.

The dashboard must work with no internet access, so the browser loads Plotly from
this server, never from a CDN. A finder (rather than a copy checked into static/)
keeps the JavaScript in step with the Python package that builds the figures:
`runserver`, the test live server and `collectstatic` all see it at
`topology/vendor/plotly.min.js`.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import plotly
from django.contrib.staticfiles.finders import BaseFinder
from django.core.checks import CheckMessage, Error
from django.core.files.storage import FileSystemStorage

PLOTLY_DIR = Path(plotly.__file__).resolve().parent / "package_data"
PREFIX = "topology/vendor"
FILENAME = "plotly.min.js"
STATIC_PATH = f"{PREFIX}/{FILENAME}"


class PlotlyFinder(BaseFinder):
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.storage = FileSystemStorage(location=str(PLOTLY_DIR))
        self.storage.prefix = PREFIX

    def check(self, **kwargs: Any) -> list[CheckMessage]:
        if (PLOTLY_DIR / FILENAME).is_file():
            return []
        return [Error(f"{PLOTLY_DIR / FILENAME} is missing; reinstall plotly", id="topology.E001")]

    def find(self, path: str, find_all: bool = False, **kwargs: Any) -> str | list[str]:
        if path != STATIC_PATH:
            return []
        found = str(PLOTLY_DIR / FILENAME)
        return [found] if find_all or kwargs.get("all") else found

    def list(self, ignore_patterns: list[str] | None) -> Iterator[tuple[str, FileSystemStorage]]:
        yield FILENAME, self.storage
