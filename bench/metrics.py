"""Benchmark of /metrics and the figures history (issue 33; prints figures, not a test).

In a PostgreSQL database of its own, writes 5,000 nodes' stored figures (8 NUMA zones,
5 resources a zone: cpu, memory, hugepages-1Gi, hugepages-2Mi, a GPU; per-CPU use and
the largest pod per policy), then measures:
  1. the scrape, through Django's test client with a viewer's API token: the first
     after the figures changed (it renders the per-node part) and then p50/p99 of
     later ones, plain and gzipped, and the body sizes: target p99 <= 1 s, <= 20 MB;
  2. the baseline: `prometheus_client` generating the same number of samples from
     plain dicts (no database), in this run: the first scrape against it (<= 2x);
  3. 14 days of history for those 5,000 nodes (hourly node rows, a cluster row every
     5 minutes) and its size in PostgreSQL: target <= 1 GB;
  4. the overview's trend chart for 14 days (read, downsample, the Plotly figure as
     JSON): target <= 300 ms.
Run: `python bench/metrics.py [--nodes 5000] [--scrapes 20] [--keep-db]`.
"""

from __future__ import annotations

import argparse
import gzip
import os
import random
import statistics
import sys
import time
from datetime import timedelta
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "webapp.settings")
from scratch_db import drop_database, postgres_server, scratch_database, vacuum  # noqa: E402

SCRATCH_DB = "topolens_bench_metrics"
ZONES = 8
GI = 2**30
RESOURCES = {  # name -> (capacity, allocatable) per zone
    "cpu": (48_000, 46_000),
    "memory": (256 * GI, 250 * GI),
    "hugepages-1Gi": (16 * GI, 16 * GI),
    "hugepages-2Mi": (4 * GI, 4 * GI),
    "nvidia.com/gpu": (1, 1),
}
POLICIES = ("none", "best-effort", "restricted", "single-numa-node")


def percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(share * (len(ordered) - 1)))]


def node_figures(rng: random.Random) -> dict[str, object]:
    """One node's stored figures, as the figures job writes them."""
    zone_resources, zone_cpus, free = {}, {}, {}
    for numa in range(ZONES):
        zone_resources[str(numa)] = {
            name: [capacity, allocatable, rng.randint(0, allocatable)]
            for name, (capacity, allocatable) in RESOURCES.items()
        }
        exclusive = rng.randint(0, 40)
        reserved = {"kubelet": 2 if numa == 0 else 0, "node": 0, "system-qos": 0,
                    "reservation": rng.choice([0, 0, 4])}  # fmt: skip
        shared = 48 - exclusive - sum(reserved.values())
        free[str(numa)] = shared  # the shared pool outside Reservations, as the engine counts
        zone_cpus[str(numa)] = {"capacity": 48, "free": free[str(numa)], "exclusive": exclusive,
                                "shared": shared, "reserved": reserved}  # fmt: skip
    total = sum(free.values())
    largest = max(free.values())
    return {
        "free_cpus_by_zone": free,
        "free_cpus_total": total,
        "max_free_cpus_in_one_zone": largest,
        "largest_exclusive_pod": {
            p: largest if p == "single-numa-node" else total for p in POLICIES
        },  # fmt: skip
        "largest_exclusive_pod_own_policy": largest,
        "zone_cpus": zone_cpus,
        "zone_resources": zone_resources,
        "fragmentation": 1 - largest / total if total else 0.0,
    }


def build(nodes: int) -> tuple[object, dict[str, dict[str, object]]]:
    from django.utils import timezone

    from topology.choices import Flavour
    from topology.models import Cluster, Node, NodeFigures, NodeTopology

    rng = random.Random(nodes)
    cluster = Cluster.objects.create(name="bench")
    now = timezone.now()
    created = Node.objects.bulk_create(
        [Node(cluster=cluster, name=f"node-{i:05d}", observed_at=now) for i in range(nodes)],
        batch_size=2000,
    )
    NodeTopology.objects.bulk_create(
        [
            NodeTopology(
                node=node,
                flavour=Flavour.UPSTREAM_V1ALPHA2,
                api_version="v1alpha2",
                observed_at=now,
            )
            for node in created
        ],  # fmt: skip
        batch_size=2000,
    )
    figures = {node.name: node_figures(rng) for node in created}
    NodeFigures.objects.bulk_create(
        [NodeFigures(node=node, computed_at=now, **figures[node.name]) for node in created],
        batch_size=1000,
    )
    return cluster, figures


def baseline_seconds(figures: dict[str, dict[str, object]], samples: int) -> float:
    """prometheus_client generating `samples` gauge samples from plain dicts."""
    from prometheus_client import CollectorRegistry, generate_latest
    from prometheus_client.core import GaugeMetricFamily

    labels = ["cluster", "node", "numa_zone", "resource"]

    class Plain:
        def collect(self):  # type: ignore[no-untyped-def]
            family = GaugeMetricFamily("plain_zone_amount", "plain dicts", labels=labels)
            made = 0
            while made < samples:
                for node, row in figures.items():
                    for numa, by_name in row["zone_resources"].items():  # type: ignore[union-attr]
                        for name, values in by_name.items():
                            for value in values:
                                family.add_metric(["bench", node, numa, name], value)
                                made += 1
                                if made >= samples:
                                    yield family
                                    return

    registry = CollectorRegistry(auto_describe=False)
    registry.register(Plain())  # type: ignore[arg-type]
    start = time.perf_counter()
    generate_latest(registry)
    return time.perf_counter() - start


def scrape_figures(client: object, runs: int) -> tuple[float, int]:
    """The scrapes (see the module docstring); (the first one's seconds, its samples)."""
    from django.core.cache import cache
    from prometheus_client.parser import text_string_to_metric_families

    from topology.services.observability.metrics import forget_rendered

    forget_rendered()
    cache.clear()
    start = time.perf_counter()
    first = client.get("/metrics")  # type: ignore[attr-defined]
    assert first.status_code == 200, first.status_code
    cold = time.perf_counter() - start
    body = first.content
    samples = sum(len(f.samples) for f in text_string_to_metric_families(body.decode()))
    plain, zipped = [], []
    for _ in range(runs):
        start = time.perf_counter()
        client.get("/metrics")  # type: ignore[attr-defined]
        plain.append(time.perf_counter() - start)
        start = time.perf_counter()
        gz = client.get("/metrics", HTTP_ACCEPT_ENCODING="gzip")  # type: ignore[attr-defined]
        zipped.append(time.perf_counter() - start)
    size_gz = len(gz.content)
    assert gzip.decompress(gz.content).startswith(body[:1000])  # the same per-node part
    print(f"samples: {samples:,}; body {len(body) / 1e6:.1f} MB plain, "
          f"{size_gz / 1e6:.1f} MB gzipped (target <= 20 MB: "
          f"{'met gzipped' if size_gz <= 20e6 else 'MISSED'}"
          f"{', met plain' if len(body) <= 20e6 else ', plain MISSED'})")  # fmt: skip
    print(f"first scrape after the figures changed (renders the per-node part): {cold:.2f} s")
    for name, times in (("plain", plain), ("gzip", zipped)):
        p99 = percentile(times, 0.99)
        print(
            f"later scrapes, {name}: p50 {statistics.median(times) * 1000:.0f} ms, "
            f"p99 {p99 * 1000:.0f} ms (target p99 <= 1 s: {'met' if p99 <= 1 else 'MISSED'})"
        )
    return cold, samples


def history(cluster: object, nodes: int) -> None:
    """14 days of history: its size, and the trend chart's time."""
    from django.db import connection
    from django.utils import timezone

    from topology.figures.encode import payload_json
    from topology.figures.history import trend_chart
    from topology.models import ClusterFigureSample, Node, NodeFigureSample
    from topology.services.observability.history import HistoryRange, cluster_history

    rng = random.Random(1)
    now = timezone.now().replace(minute=0, second=0, microsecond=0)
    node_ids = list(Node.objects.filter(cluster=cluster).values_list("pk", flat=True))
    start = time.perf_counter()
    samples = [
        ClusterFigureSample(
            cluster=cluster,
            taken_at=now - timedelta(minutes=5 * i),
            nodes=nodes,
            zones=nodes * ZONES,
            free_cpus_total=rng.randint(50_000, 90_000),
            largest_free_block=rng.randint(20, 48),
            fragmentation=rng.random(),
            largest_pod_by_policy={p: rng.randint(8, 48) for p in POLICIES},
        )  # fmt: skip
        for i in range(14 * 24 * 12)
    ]
    ClusterFigureSample.objects.bulk_create(samples, batch_size=4000)
    for hour in range(14 * 24):
        when = now - timedelta(hours=hour)
        NodeFigureSample.objects.bulk_create(
            [
                NodeFigureSample(
                    node_id=pk,
                    hour=when,
                    free_cpus_by_zone={str(z): rng.randint(0, 46) for z in range(ZONES)},
                    free_cpus_total=rng.randint(0, 368),
                    max_free_cpus_in_one_zone=46,
                    fragmentation=rng.random(),
                )
                for pk in node_ids
            ],  # fmt: skip
            batch_size=5000,
        )
    print(f"history written: 14 days for {nodes} nodes in {time.perf_counter() - start:.0f} s")
    vacuum()
    with connection.cursor() as cursor:
        sizes = {}
        for model in (ClusterFigureSample, NodeFigureSample):
            cursor.execute("SELECT pg_total_relation_size(%s)", [model._meta.db_table])
            sizes[model.__name__] = cursor.fetchone()[0]
    total = sum(sizes.values())
    parts = ", ".join(f"{name} {size / 1e6:.0f} MB" for name, size in sizes.items())
    verdict = "met" if total <= 1e9 else "MISSED"
    print(f"history size: {total / 1e6:.0f} MB ({parts}); target <= 1 GB: {verdict}")
    times = []
    for _ in range(7):
        start = time.perf_counter()
        rows = cluster_history(cluster, HistoryRange.for_chart())  # type: ignore[arg-type]
        payload_json({"trend": trend_chart(rows)}, {})
        times.append(time.perf_counter() - start)
    p99 = percentile(times, 0.99)
    print(
        f"trend chart for 14 days ({len(rows)} points): p50 {statistics.median(times) * 1000:.0f} "
        f"ms, p99 {p99 * 1000:.0f} ms (target <= 300 ms: {'met' if p99 <= 0.3 else 'MISSED'})"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--nodes", type=int, default=5000)
    parser.add_argument("--scrapes", type=int, default=20)
    parser.add_argument("--keep-db", action="store_true")
    args = parser.parse_args()
    server = postgres_server()
    url, _ = scratch_database(server, SCRATCH_DB, reuse=False)
    os.environ["DATABASE_URL"] = url
    os.environ.setdefault("CACHE_URL", "locmem://")
    import django

    django.setup()
    from django.contrib.auth.models import Group, User
    from django.core.management import call_command
    from django.test import Client

    from scheduler_api.services.tokens import api_token_create

    try:
        call_command("migrate", verbosity=0)
        start = time.perf_counter()
        cluster, figures = build(args.nodes)
        print(f"{args.nodes} nodes x {ZONES} zones x {len(RESOURCES)} resources of figures "
              f"written in {time.perf_counter() - start:.0f} s")  # fmt: skip
        vacuum()
        user = User.objects.create_user("scrape", password=None)
        user.groups.add(Group.objects.get(name="viewer"))
        token = api_token_create(user=user, name="bench").plaintext
        client = Client(HTTP_AUTHORIZATION=f"Bearer {token}", HTTP_HOST="127.0.0.1")
        cold, samples = scrape_figures(client, args.scrapes)
        base = baseline_seconds(figures, samples)
        print(f"baseline: prometheus_client generating {samples:,} samples from plain dicts "
              f"{base:.2f} s; the first scrape is {cold / base:.2f}x it (target <= 2x: "
              f"{'met' if cold <= 2 * base else 'MISSED'})")  # fmt: skip
        history(cluster, args.nodes)
    finally:
        if not args.keep_db:
            drop_database(server, SCRATCH_DB)


if __name__ == "__main__":
    main()
