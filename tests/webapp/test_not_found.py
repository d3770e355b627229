"""With DEBUG off (as `make run` now runs), an unknown URL is a plain 404 page that lists
no URL patterns (issue 27: run.sh forced DEBUG=true, which showed every route)."""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.django_db


def test_an_unknown_url_is_a_plain_404(client, settings) -> None:
    settings.DEBUG = False
    response = client.get("/no/such/page/")
    body = response.content.decode()
    assert response.status_code == 404
    assert "Not found" in body and "/no/such/page/" in body
    assert "URLconf" not in body and "admin/" not in body.split("API docs")[0][-500:]


def test_run_sh_keeps_debug_off_by_default() -> None:
    from pathlib import Path

    from django.conf import settings as conf

    script = (Path(conf.BASE_DIR) / "scripts" / "run.sh").read_text()
    assert "DEBUG=${DEBUG:-false}" in script and "DEBUG:-true" not in script
