"""Real Chromium (Debian's /usr/bin/chromium) driven by Playwright against the live server.

Playwright never downloads a browser here. The tests skip, with the reason, only when
Chromium is missing on a developer machine; under CI (env CI set) a missing Chromium
fails them, because CI installs it (.ci/run).
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlsplit

import pytest
from django.conf import settings
from django.contrib.auth.models import Group
from django.core.management import call_command
from django.test import Client

os.environ.setdefault("PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD", "1")

CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking"]
ARTIFACTS = Path(settings.BASE_DIR) / "var" / "test-artifacts"
DEMO_NODES = 8


@pytest.fixture(scope="package")
def browser() -> Iterator[object]:
    """One Chromium for the browser tests, stopped after them: while Playwright runs, its
    event loop makes every ORM call in this thread look async to Django."""
    if not CHROMIUM.exists():
        if os.environ.get("CI"):
            pytest.fail(f"{CHROMIUM} is missing under CI; .ci/run installs the chromium package")
        pytest.skip(
            f"{CHROMIUM} is not installed (apt-get install -y chromium); browser tests skipped"
        )
    from playwright.sync_api import sync_playwright

    # Playwright's sync API keeps an asyncio loop in this thread, so Django would refuse
    # the fixtures' ORM calls as "async-unsafe" although no coroutine touches the
    # database. Allowed only while the browser runs.
    previous = os.environ.get("DJANGO_ALLOW_ASYNC_UNSAFE")
    os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] = "true"
    playwright = sync_playwright().start()
    chromium = playwright.chromium.launch(
        executable_path=str(CHROMIUM), headless=True, args=CHROMIUM_ARGS
    )
    yield chromium
    chromium.close()
    playwright.stop()
    if previous is None:
        os.environ.pop("DJANGO_ALLOW_ASYNC_UNSAFE", None)
    else:
        os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] = previous


@pytest.fixture
def demo(live_server) -> str:
    """A small demo cluster (every flavour) with its figures, in the live server's database."""
    call_command("seed_demo", "--nodes", str(DEMO_NODES), "--cluster", "demo", verbosity=0)
    return "demo"


@dataclass
class Watch:
    """What a page did that it must not: console errors, page errors, foreign requests."""

    origin: str
    errors: list[str] = field(default_factory=list)
    foreign: list[str] = field(default_factory=list)

    def on_console(self, message) -> None:
        if message.type == "error":
            self.errors.append(message.text)

    def on_request(self, request) -> None:
        scheme, netloc, *_ = urlsplit(request.url)
        if scheme in ("data", "blob"):
            return
        if f"{scheme}://{netloc}" != self.origin:
            self.foreign.append(request.url)


@pytest.fixture
def page(browser, live_server, django_user_model, role_groups):
    """A logged-in operator's page that records console errors and requests off the server."""
    user = django_user_model.objects.create_user("browser", password=None, is_staff=True)
    user.groups.add(Group.objects.get(name="operator"))
    client = Client()
    client.force_login(user)
    context = browser.new_context(
        viewport={"width": 1600, "height": 1000}, base_url=live_server.url
    )
    context.add_cookies(
        [
            {
                "name": settings.SESSION_COOKIE_NAME,
                "value": client.cookies[settings.SESSION_COOKIE_NAME].value,
                "url": live_server.url,
            }
        ]
    )
    page = context.new_page()
    watch = Watch(origin=live_server.url.rstrip("/"))
    page.on("console", watch.on_console)
    page.on("pageerror", lambda error: watch.errors.append(str(error)))
    page.on("request", watch.on_request)
    page.watch = watch
    yield page
    context.close()
    assert watch.errors == [], f"console errors: {watch.errors}"
    assert watch.foreign == [], f"requests outside the server: {watch.foreign}"


def screenshot(page, name: str) -> Path:
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    path = ARTIFACTS / f"{name}.png"
    page.screenshot(path=str(path), full_page=True)
    return path


def wait_for_charts(page) -> None:
    page.wait_for_selector("html[data-charts-drawn='true']", timeout=15000)


def assert_accessible(page) -> None:
    """Every form control has a label; every chart is a labelled image."""
    unlabelled = page.evaluate(
        """() => [...document.querySelectorAll('input:not([type=hidden]), select, textarea')]
              .filter(el => el.labels.length === 0 && !el.getAttribute('aria-label'))
              .map(el => el.name || el.id)"""
    )
    assert unlabelled == []
    unnamed = page.evaluate(
        "() => [...document.querySelectorAll('.chart')]"
        ".filter(c => !c.getAttribute('aria-label')).length"
    )
    assert unnamed == 0
