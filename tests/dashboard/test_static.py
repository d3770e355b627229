"""Plotly's JavaScript is one of our static files (the cartesian bundle of the plotly.js
version the plotly package ships), served compressed and cacheable, without a CDN."""

from __future__ import annotations

from pathlib import Path

from django.conf import settings
from django.contrib.staticfiles import finders
from plotly.offline import get_plotlyjs_version

from topology.checks import BUNDLE, bundle_version, plotly_bundle_matches


def test_the_bundle_is_a_static_file_of_the_version_the_figures_are_built_for():
    found = finders.find(str(BUNDLE))
    assert found and bundle_version(Path(found)) == get_plotlyjs_version()
    assert plotly_bundle_matches() == []


def test_the_check_warns_when_the_versions_part(monkeypatch):
    from topology import checks

    monkeypatch.setattr(checks, "get_plotlyjs_version", lambda: "9.9.9")
    (warning,) = plotly_bundle_matches()
    assert warning.id == "topology.W001" and "9.9.9" in warning.msg


def test_the_bundle_is_a_third_of_the_full_one():
    import plotly

    full = Path(plotly.__file__).parent / "package_data" / "plotly.min.js"
    partial = Path(settings.BASE_DIR) / "static" / BUNDLE
    assert partial.stat().st_size < full.stat().st_size / 3


def test_no_template_loads_anything_from_another_host():
    for template in (Path(settings.BASE_DIR) / "templates").rglob("*.html"):
        text = template.read_text()
        assert "https://" not in text and "http://" not in text and "//cdn" not in text, template


def test_collectstatic_writes_hashed_gzipped_files(tmp_path, settings):
    from django.core.management import call_command

    settings.STATIC_ROOT = tmp_path
    whitenoise = "whitenoise.storage.CompressedManifestStaticFilesStorage"
    settings.STORAGES = {**settings.STORAGES, "staticfiles": {"BACKEND": whitenoise}}
    call_command("collectstatic", "--noinput", verbosity=0)
    hashed = list(tmp_path.glob("topology/vendor/plotly-cartesian.min.*.js"))
    assert hashed and Path(f"{hashed[0]}.gz").exists()


def test_the_api_docs_load_nothing_from_another_host(admin_client):
    """Issue 27: Redoc fetched Google Fonts and a CDN logo although no internet is promised."""
    for url in ("/api/schema/redoc/", "/api/schema/swagger-ui/"):
        response = admin_client.get(url)
        body = response.content.decode()
        assert response.status_code == 200
        assert "googleapis" not in body and "gstatic" not in body
        policy = response["Content-Security-Policy"]
        assert "default-src 'self'" in policy and "https:" not in policy


def test_no_static_file_names_a_cdn():
    """The dashboard works offline: nothing we serve points a browser at a CDN."""
    import re

    cdn = re.compile(
        r"cdn\.plot\.ly|cdn\.jsdelivr|unpkg\.com|cdnjs|fonts\.googleapis|fonts\.gstatic"
    )
    for path in (Path(settings.BASE_DIR) / "static").rglob("*"):
        if path.is_file() and path.suffix in (".js", ".css", ".html"):
            assert not cdn.search(path.read_text(errors="replace")), path
