"""Benchmark of the dashboard (prints figures; not a test).

Cases (issue 5):
  A. the overview of a 5,000-node x 8-zone cluster: server time and payload bytes
     (the page, a filtered and sorted page, and the JSON its live refresh polls);
  B. the node page of a 768-CPU Koordinator node (120 pods): server time and payload;
  C. time to first chart draw in Chromium for both, cold (empty cache) and warm.
Targets: overview server <= 300 ms, payload <= 1 MB, first draw <= 2 s.

Everything lives in a throwaway SQLite database under var/bench-dashboard/ (built once,
reused; --rebuild starts again). Run: `python bench/dashboard.py [--nodes N] [--runs R]`.
"""

from __future__ import annotations

import argparse
import gzip
import os
import shutil
import statistics
import sys
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
VAR = ROOT / "var" / "bench-dashboard"
CHROMIUM = "/usr/bin/chromium"
TARGET_SERVER_MS, TARGET_BYTES, TARGET_DRAW_MS = 300, 1_000_000, 2000


def configure(rebuild: bool) -> None:
    if rebuild and VAR.exists():
        shutil.rmtree(VAR)
    VAR.mkdir(parents=True, exist_ok=True)
    os.environ.update(
        {
            "TOPOLENS_VAR_DIR": str(VAR),
            "DATABASE_URL": f"sqlite:///{VAR / 'bench.sqlite3'}",
            "CELERY_BROKER_URL": "memory://",
            "DEBUG": "false",
            "ALLOWED_HOSTS": "127.0.0.1,localhost,testserver",
            "DJANGO_SETTINGS_MODULE": "webapp.settings",
            "PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD": "1",
        }
    )
    sys.path.insert(0, str(ROOT))
    import django

    django.setup()


def prepare(nodes: int) -> None:
    from django.core.management import call_command

    from bench.dashboard_data import build_big_node, build_fleet
    from topology.models import Cluster

    call_command("migrate", verbosity=0)
    cluster = Cluster.objects.filter(name="bench").first()
    if cluster is not None and cluster.nodes.count() == nodes + 1:
        print(f"reusing {nodes} nodes + 1 big node in {VAR / 'bench.sqlite3'}")
        return
    Cluster.objects.filter(name="bench").delete()
    started = time.perf_counter()
    cluster = build_fleet(nodes)
    build_big_node(cluster)
    print(
        f"built {nodes} nodes x 8 zones + a 768-CPU node in {time.perf_counter() - started:.1f} s"
    )


def staff_client():  # type: ignore[no-untyped-def]
    from django.contrib.auth import get_user_model
    from django.contrib.auth.models import Group
    from django.test import Client

    user, _ = get_user_model().objects.get_or_create(username="bench", defaults={"is_staff": True})
    user.groups.add(Group.objects.get(name="viewer"))  # the dashboard asks for a role
    client = Client()
    client.force_login(user)
    return client


def time_get(client, url: str, runs: int) -> tuple[float, float, int, int]:  # type: ignore[no-untyped-def]
    """(median ms, max ms, bytes, gzip bytes) after two warm-up requests."""
    for _ in range(2):
        client.get(url)
    timings, body = [], b""
    for _ in range(runs):
        started = time.perf_counter()
        response = client.get(url)
        timings.append((time.perf_counter() - started) * 1000)
        assert response.status_code == 200, (url, response.status_code)
        body = response.content
    return statistics.median(timings), max(timings), len(body), len(gzip.compress(body))


def server_figures(runs: int) -> dict[str, str]:
    from bench.dashboard_data import BIG_NODE

    client = staff_client()
    cases = {
        "overview (page 1 of 5,001 nodes)": "/c/bench/",
        "overview filtered + sorted": "/c/bench/?label=pool=pool-3&min_free=24&sort=-free",
        "overview live JSON": "/c/bench/live.json",
        "node page, 768 CPUs": f"/c/bench/nodes/{BIG_NODE}/",
        "node live JSON, 768 CPUs": f"/c/bench/nodes/{BIG_NODE}/live.json",
    }
    print(f"\nserver time (Django test client, median of {runs}) and payload")
    print(f"{'case':36} {'median ms':>10} {'max ms':>8} {'bytes':>10} {'gzip':>9}")
    for name, url in cases.items():
        median, worst, size, zipped = time_get(client, url, runs)
        print(f"{name:36} {median:10.1f} {worst:8.1f} {size:10,} {zipped:9,}")
    return cases


def serve() -> tuple[str, object]:
    """The real WSGI app (WhiteNoise serving collected static files) on a free port."""
    from django.core.management import call_command
    from django.core.servers.basehttp import ThreadedWSGIServer, WSGIRequestHandler
    from django.core.wsgi import get_wsgi_application

    call_command("collectstatic", interactive=False, verbosity=0)

    class Quiet(WSGIRequestHandler):
        def log_message(self, *args: object) -> None:
            pass

    server = ThreadedWSGIServer(("127.0.0.1", 0), Quiet)
    server.set_app(get_wsgi_application())
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return f"http://127.0.0.1:{server.server_address[1]}", server


def first_draw(cases: dict[str, str]) -> None:
    from django.conf import settings
    from playwright.sync_api import sync_playwright

    if not Path(CHROMIUM).exists():
        print(f"\n{CHROMIUM} is missing: no browser figures (apt-get install -y chromium)")
        return
    base, server = serve()
    cookie = staff_client().cookies[settings.SESSION_COOKIE_NAME].value
    print("\ntime to first chart draw in Chromium (ms from navigation start; server warmed up;")
    print("cold: empty browser cache, so plotly.js is fetched and compiled; warm: reload)")
    print(f"{'case':36} {'cold':>8} {'warm':>8} {'of which plotly.js':>20}")
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path=CHROMIUM,
            headless=True,
            args=["--no-sandbox", "--disable-gpu", "--disable-background-networking"],
        )
        pages = {name: url for name, url in cases.items() if not url.endswith(".json")}
        for round_ in ("warm-up", "measure"):
            for name, url in pages.items():
                context = browser.new_context(viewport={"width": 1600, "height": 1000})
                context.add_cookies(
                    [{"name": settings.SESSION_COOKIE_NAME, "value": cookie, "url": base}]
                )
                page = context.new_page()
                (cold, plotly_cold), (warm, plotly_warm) = (_draw(page, base + url) for _ in "cw")
                if round_ == "measure":
                    split = f"{plotly_cold:.0f} / {plotly_warm:.0f}"
                    print(f"{name:36} {cold:8.0f} {warm:8.0f} {split:>20}")
                context.close()
        browser.close()
    server.shutdown()  # type: ignore[attr-defined]


def _draw(page, url: str) -> tuple[float, float]:  # type: ignore[no-untyped-def]
    """(first draw, time spent fetching and running plotly.js), ms from navigation start."""
    page.goto(url)
    page.wait_for_function("() => window.topolens && window.topolens.firstDraw !== null")
    return tuple(
        page.evaluate(
            r"""() => {
              const plotly = performance.getEntriesByType('resource')
                .find(r => /plotly[^/]*\.js$/.test(r.name));
              return [window.topolens.firstDraw,
                      window.topolens.scriptStart - (plotly ? plotly.startTime : 0)];
            }"""
        )
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--nodes", type=int, default=5000)
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--rebuild", action="store_true", help="start from an empty database")
    args = parser.parse_args()
    configure(args.rebuild)
    prepare(args.nodes)
    from django.core.management import call_command

    call_command("collectstatic", interactive=False, verbosity=0)  # pages link hashed names
    cases = server_figures(args.runs)
    first_draw(cases)
    print(
        f"\ntargets: overview server <= {TARGET_SERVER_MS} ms, payload <= {TARGET_BYTES:,} bytes, "
        f"first draw <= {TARGET_DRAW_MS} ms"
    )
    cores, load = os.cpu_count(), os.getloadavg()[0]
    print(f"machine: {cores} CPUs, load average {load:.1f} (figures scale with contention)")


if __name__ == "__main__":
    main()
