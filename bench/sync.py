"""Benchmark of the live sync (prints figures; not a test).

A fake API server (the tests' one, in a process of its own) serves 5,000 nodes with
NRTs of 8 zones and 384 CPUs (koordlet's CPU topology annotation) and 100,000 pods;
the sync runs here, through the real kubernetes client, into a scratch PostgreSQL
database. It measures:
  1. a cold full resync, against a raw psycopg COPY of the very rows it wrote (target ≤ 3×),
     into twins of the tables without foreign keys (the target's baseline) and, for
     information, with them (PostgreSQL checks each row's keys at commit, as it does for
     the sync);
  2. a no-change resync (target ≤ 5 s);
  3. a steady 500 events/s: event (emitted by the server) → committed, p50/p99 (≤ 2 s);
and the peak memory of this, the sync, process (target ≤ 1 GB). The cold resync's lines
also give the CPU time of the fake server and of PostgreSQL (the sync's backends, its
page writers' included, and PostgreSQL's background work): on a small machine they all
share the cores.
Run: `make bench`, or `python bench/sync.py [--scale 0.1] [--rate 500] [--seconds 20]`.
PostgreSQL: the server of DATABASE_URL (else postgres://postgres@127.0.0.1:5432/postgres).
"""

from __future__ import annotations

import argparse
import multiprocessing
import os
import resource
import statistics
import sys
import tempfile
import threading
import time
from multiprocessing.connection import Connection
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
SCRATCH_DB = "topolens_bench_sync"
MIRROR_TABLES = (
    "topology_node",
    "topology_nodetopology",
    "topology_zone",
    "topology_zoneresource",
    "topology_pod",
    "topology_podallocation",
    "topology_qosconfig",
    "topology_qosstrategy",
    "topology_resctrlsetting",
)


def main() -> None:
    options = parse_args()
    nodes = max(4, round(5_000 * options.scale))
    server_url = postgres_server()
    database_url = create_scratch_database(server_url)
    os.environ["DATABASE_URL"] = database_url
    try:
        run(options, nodes, database_url)
    finally:
        if not options.keep_db:
            drop_scratch_database(server_url)


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scale", type=float, default=1.0, help="1.0: 5,000 nodes, 100,000 pods")
    parser.add_argument("--rate", type=float, default=500.0, help="events per second")
    parser.add_argument("--seconds", type=float, default=20.0, help="length of the event stream")
    parser.add_argument("--keep-db", action="store_true", help=f"keep the {SCRATCH_DB} database")
    return parser.parse_args()


def run(options: argparse.Namespace, nodes: int, database_url: str) -> None:
    # Django (and everything that imports models) is imported only now, once
    # DATABASE_URL points at the scratch database: settings read it at import.
    import django

    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "webapp.settings")
    django.setup()
    from django.core.management import call_command

    from bench.sync_cluster import serve

    call_command("migrate", verbosity=0)
    context = multiprocessing.get_context("spawn")
    ours, theirs = context.Pipe()
    server = context.Process(target=serve, args=(theirs, nodes, 20), daemon=True)
    server.start()
    _, url, token, built = ours.recv()
    print(f"fake API server: {nodes:,} nodes, {nodes * 20:,} pods, built in {built} s")
    figures = measure(ours, url, token, options, server.pid)
    figures["baseline"] = copy_baseline(database_url)
    figures["baseline_fk"] = copy_baseline(database_url, foreign_keys=True)
    ours.send(("stop",))
    server.join(timeout=30)
    report(figures, nodes, options)


def measure(
    pipe: Connection, url: str, token: str, options: argparse.Namespace, server_pid: int
) -> dict[str, object]:

    from topology.choices import ConnectionMode
    from topology.models import Cluster
    from topology.sync.client import Credentials
    from topology.sync.session import ClusterSync
    from topology.sync.settings import SyncSettings

    kubeconfig = write_kubeconfig(url, token)
    credentials = Credentials(ConnectionMode.KUBECONFIG, kubeconfig)
    settings = SyncSettings.load()
    cluster = Cluster.objects.create(name="bench")
    figures: dict[str, object] = {}
    started, cpu = time.perf_counter(), time.process_time()
    server_cpu, postgres_cpu_before = process_cpu(server_pid), postgres_cpu()
    cold = ClusterSync(cluster, credentials, settings).run_once()
    figures["cold"] = time.perf_counter() - started
    figures["cold_cpu"] = time.process_time() - cpu
    figures["cold_server_cpu"] = process_cpu(server_pid) - server_cpu
    figures["cold_postgres_cpu"] = postgres_cpu() - postgres_cpu_before
    figures["rows"] = row_counts()
    figures["errors"] = cold.total("errors")
    started, cpu = time.perf_counter(), time.process_time()
    again = ClusterSync(cluster, credentials, settings).run_once()
    figures["no_change"] = time.perf_counter() - started
    figures["no_change_cpu"] = time.process_time() - cpu
    figures["no_change_written"] = again.total("written") + again.total("removed")
    figures.update(stream(pipe, cluster, credentials, settings, options))
    figures["peak_rss"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    return figures


def process_cpu(pid: int) -> float:
    """CPU seconds another process has used (Linux /proc; NaN elsewhere)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()
    except OSError:
        return float("nan")
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def postgres_cpu() -> float:
    """CPU seconds PostgreSQL has used on this machine: every live postgres process, plus
    what the postmaster's children that have exited used (the sync's page writers'
    backends end with their list). Background work (WAL writer, autovacuum) is in it."""
    clock = os.sysconf("SC_CLK_TCK")
    stats = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            text = stat.read_text()
        except OSError:
            continue
        name, fields = text[text.find("(") + 1 : text.rfind(")")], text.rpartition(")")[2].split()
        if name == "postgres":
            stats[int(stat.parent.name)] = fields
    if not stats:
        return float("nan")
    total = sum(int(f[11]) + int(f[12]) for f in stats.values())
    postmasters = [f for f in stats.values() if int(f[1]) not in stats]  # its parent is not
    total += sum(int(f[13]) + int(f[14]) for f in postmasters)
    return total / clock


def stream(pipe, cluster, credentials, settings, options) -> dict[str, object]:  # type: ignore[no-untyped-def]
    """List, watch; once the watches run, the server emits events at a steady rate."""
    from bench.sync_cluster import EMITTED_AT
    from topology.sync.session import ClusterSync

    latencies: list[float] = []

    def on_flush(events, committed: float) -> None:  # type: ignore[no-untyped-def]
        for event in events:
            emitted = (event.obj["metadata"].get("labels") or {}).get(EMITTED_AT)
            if emitted:
                latencies.append(committed - float(emitted))

    session = ClusterSync(cluster, credentials, settings, on_flush=on_flush)

    def drive(_cluster_id: int) -> None:
        def emit_then_stop() -> None:
            time.sleep(1.0)  # let every watch open
            pipe.send(("stream", options.rate, options.seconds))
            pipe.recv()
            deadline = time.monotonic() + 30
            while (
                len(latencies) < int(options.rate * options.seconds) and time.monotonic() < deadline
            ):
                time.sleep(0.1)
            session.stop()

        threading.Thread(target=emit_then_stop, daemon=True).start()

    session._after_full_list = drive  # noqa: SLF001 - the bench's hook into the session
    session.run_watch(duration=None)
    ordered = sorted(latencies)
    return {
        "events": len(ordered),
        "emitted": int(options.rate * options.seconds),
        "p50": statistics.median(ordered) if ordered else float("nan"),
        "p99": ordered[int(len(ordered) * 0.99) - 1] if ordered else float("nan"),
        "max": ordered[-1] if ordered else float("nan"),
    }


def copy_baseline(database_url: str, *, foreign_keys: bool = False) -> float:
    """Raw COPY of the rows the cold resync wrote, into empty twins of the same tables
    (same columns and indexes); only the COPY FROM and its commit are timed.

    `foreign_keys`: the twins also get the tables' foreign keys (to the real parent
    rows), which PostgreSQL checks at commit for every row, as it does for the sync."""
    import psycopg

    seconds = 0.0
    twin = "bench_fk_" if foreign_keys else "bench_"
    with psycopg.connect(database_url) as conn, tempfile.TemporaryDirectory() as folder:
        for table in MIRROR_TABLES:
            dump = Path(folder) / f"{table}.bin"
            with (
                dump.open("wb") as out,
                conn.cursor().copy(f"COPY {table} TO STDOUT (FORMAT BINARY)") as copy,
            ):
                for chunk in copy:
                    out.write(chunk)
            conn.execute(f"CREATE TABLE {twin}{table} (LIKE {table} INCLUDING ALL)")
            if foreign_keys:
                for (definition,) in conn.execute(
                    "SELECT pg_get_constraintdef(oid) FROM pg_constraint"
                    " WHERE conrelid = %s::regclass AND contype = 'f'",
                    (table,),
                ).fetchall():
                    conn.execute(f"ALTER TABLE {twin}{table} ADD {definition}")
            conn.commit()
            started = time.perf_counter()
            with (
                dump.open("rb") as source,
                conn.cursor().copy(f"COPY {twin}{table} FROM STDIN (FORMAT BINARY)") as copy,
            ):
                while chunk := source.read(1 << 20):
                    copy.write(chunk)
            conn.commit()
            seconds += time.perf_counter() - started
    return seconds


def row_counts() -> dict[str, int]:
    from django.db import connection

    counts = {}
    with connection.cursor() as cursor:
        for table in MIRROR_TABLES:
            cursor.execute(f"SELECT count(*) FROM {table}")
            counts[table.removeprefix("topology_")] = cursor.fetchone()[0]
    return counts


def report(figures: dict[str, object], nodes: int, options: argparse.Namespace) -> None:
    cold, baseline = float(figures["cold"]), float(figures["baseline"])  # type: ignore[arg-type]
    baseline_fk = float(figures["baseline_fk"])  # type: ignore[arg-type]
    ratio = cold / baseline
    rss = int(figures["peak_rss"]) / 2**20  # type: ignore[call-overload]
    rows = figures["rows"]
    verdict = lambda ok: "ok" if ok else "MISSED"  # noqa: E731
    print(f"\nshape: {nodes:,} nodes x {8} zones x 384 CPUs, {nodes * 20:,} pods; rows written:")
    print("  " + ", ".join(f"{name} {count:,}" for name, count in rows.items()))  # type: ignore[attr-defined]
    print(f"\n{'measure':<44}{'value':>14}  {'target':<22}verdict")
    lines = [
        (
            "cold full resync",
            f"{cold:.1f} s",
            f"<= 3 x COPY ({3 * baseline:.1f} s)",
            verdict(ratio <= 3),
        ),
        ("  CPU time of the sync process in it", f"{float(figures['cold_cpu']):.1f} s", "", ""),
        (
            "  CPU time of the fake API server in it",
            f"{float(figures['cold_server_cpu']):.1f} s",
            "",
            "",
        ),
        (
            "  CPU time of PostgreSQL in it",
            f"{float(figures['cold_postgres_cpu']):.1f} s",
            "",
            "",
        ),
        ("  raw psycopg COPY of the same rows", f"{baseline:.1f} s", "(baseline)", ""),
        ("  ratio to the baseline", f"{ratio:.1f} x", "<= 3 x", verdict(ratio <= 3)),
        (
            "  same COPY, with the tables' foreign keys",
            f"{baseline_fk:.1f} s",
            f"{cold / baseline_fk:.1f} x",
            "for information",
        ),
        (
            "no-change resync",
            f"{float(figures['no_change']):.1f} s",
            "<= 5 s",
            verdict(float(figures["no_change"]) <= 5),
        ),  # type: ignore[arg-type]
        (
            "  CPU time of the sync process in it",
            f"{float(figures['no_change_cpu']):.1f} s",
            "",
            "",
        ),
        (
            "  rows written by it",
            f"{figures['no_change_written']}",
            "0",
            verdict(figures["no_change_written"] == 0),
        ),
        (
            f"events applied ({options.rate:g}/s for {options.seconds:g} s)",
            f"{figures['events']}/{figures['emitted']}",
            "all",
            verdict(figures["events"] == figures["emitted"]),
        ),
        ("event -> database latency p50", f"{float(figures['p50']):.2f} s", "", ""),  # type: ignore[arg-type]
        (
            "event -> database latency p99",
            f"{float(figures['p99']):.2f} s",
            "<= 2 s",
            verdict(float(figures["p99"]) <= 2),
        ),  # type: ignore[arg-type]
        ("event -> database latency max", f"{float(figures['max']):.2f} s", "", ""),  # type: ignore[arg-type]
        ("peak memory of the sync process", f"{rss:,.0f} MB", "<= 1 GB", verdict(rss <= 1024)),
        (
            "objects refused by the parsers",
            f"{figures['errors']}",
            "0",
            verdict(figures["errors"] == 0),
        ),
    ]
    for name, value, target, ok in lines:
        print(f"{name:<44}{value:>14}  {target:<22}{ok}")


def write_kubeconfig(url: str, token: str) -> str:
    import json

    handle = tempfile.NamedTemporaryFile("w", suffix=".kubeconfig", delete=False)
    config = {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [{"name": "bench", "cluster": {"server": url}}],
        "users": [{"name": "bench", "user": {"token": token}}],
        "contexts": [{"name": "bench", "context": {"cluster": "bench", "user": "bench"}}],
        "current-context": "bench",
    }
    with handle:
        json.dump(config, handle)
    return handle.name


def postgres_server() -> str:
    url = os.environ.get("DATABASE_URL", "")
    if not url.startswith(("postgres://", "postgresql://")):
        url = "postgres://postgres@127.0.0.1:5432/postgres"
    return url


def _with_database(url: str, name: str) -> str:
    parts = urlsplit(url)
    return urlunsplit(parts._replace(path=f"/{name}"))


def create_scratch_database(server_url: str) -> str:
    import psycopg

    with psycopg.connect(_with_database(server_url, "postgres"), autocommit=True) as conn:
        conn.execute(f"DROP DATABASE IF EXISTS {SCRATCH_DB}")
        conn.execute(f"CREATE DATABASE {SCRATCH_DB}")
    return _with_database(server_url, SCRATCH_DB)


def drop_scratch_database(server_url: str) -> None:
    import psycopg
    from django.db import connections

    connections.close_all()
    with psycopg.connect(_with_database(server_url, "postgres"), autocommit=True) as conn:
        conn.execute(f"DROP DATABASE IF EXISTS {SCRATCH_DB}")


if __name__ == "__main__":
    main()
