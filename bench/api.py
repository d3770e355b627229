"""Benchmark of the REST API (issue 6; prints figures, not a test).

Creates a cluster of 5,000 nodes in a PostgreSQL database of its own (seed_demo's
generator through the real importer: every NRT flavour, about 24 pods a node,
Reservations, the QoS ConfigMap), serves the app with gunicorn (4 workers) on
loopback and measures, authenticated with an API token of an `operator`:
  1. GET /api/v1/clusters/{c}/nodes?page_size=100 under a fixed arrival rate sent by a
     second process (latency counted from each request's scheduled send time, so
     queueing shows): target p99 <= 100 ms;
  2. the full export (/api/v1/clusters/{c}/export, read to its last byte) against a
     baseline timed in the same run: `values()` + orjson over the same rows (<= 2x);
  3. what-if POST on a warm server (every worker has answered what-ifs before), a small
     pod and a 16-CPU exclusive pod, replicas 1 and 10: target p99 <= 50 ms. Measured
     twice: a question asked before on the same mirror (answered from the answer
     cache, shared by the workers through Redis as in production: `--cache-url`), and a
     new question every time (its memory request differs by a few MiB, so the engine
     runs: the cost of a question nobody asked yet). Then the
     small pod and the 16-CPU pod again right after a pod changed (the mirror version moved: the
     worker refreshes its snapshot before it answers).
Run: `python bench/api.py [--nodes 5000] [--rate 20] [--seconds 20] [--whatif-runs 3]
[--keep-db] [--reuse-db]`. Needs the `bench` extra: `pip install -e '.[bench]'`.
PostgreSQL: the server of DATABASE_URL (else postgres://postgres@127.0.0.1:5432/postgres).
"""

from __future__ import annotations

import argparse
import http.client
import itertools
import json
import multiprocessing
import os
import queue
import signal
import socket
import statistics
import subprocess
import sys
import threading
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))
from mirror_changes import relabel_bound_pod  # noqa: E402
from scratch_db import drop_database, postgres_server, scratch_database, vacuum  # noqa: E402

SCRATCH_DB = "topolens_bench_api"
CLUSTER = "bench"
WORKERS = 4
NODES_PATH = f"/api/v1/clusters/{CLUSTER}/nodes?page_size=100"
EXPORT_PATH = f"/api/v1/clusters/{CLUSTER}/export"
WHATIF_PATH = f"/api/v1/clusters/{CLUSTER}/whatif"


# --- the database ---------------------------------------------------------------------------


def seed(nodes: int) -> float:
    """The demo generator's cluster of `nodes` nodes, imported like a kubectl dump."""
    from django.core.management import call_command

    from topology.demo import generate_demo_objects
    from topology.models import Cluster
    from topology.services.mirror.figures import recompute_figures
    from topology.services.mirror.importer import import_objects

    start = time.perf_counter()
    call_command("migrate", verbosity=0)
    objects = generate_demo_objects(nodes=nodes, seed=0, cluster=CLUSTER)
    summary = import_objects(cluster_name=CLUSTER, objects=objects)
    if not summary.ok:
        raise SystemExit(f"the generator's objects were refused: {summary.errors[:3]}")
    recompute_figures(cluster_id=Cluster.objects.get(name=CLUSTER).pk)
    vacuum()
    return time.perf_counter() - start


def operator_token() -> str:
    """A fresh token of a user in the `operator` role (what-if needs it)."""
    from django.contrib.auth.models import Group, User

    from scheduler_api.services.tokens import api_token_create

    user, _ = User.objects.get_or_create(username="bench-operator")
    user.groups.add(Group.objects.get(name="operator"))
    return api_token_create(user=user, name=f"bench {time.time():.0f}").plaintext


# --- gunicorn -------------------------------------------------------------------------------


def server_environment(options: argparse.Namespace) -> dict[str, str]:
    """The workers' settings: the shared cache, and throttles out of the way (this
    measures latency; the bench sends more what-ifs a minute than a user may)."""
    return {
        **os.environ,
        "CACHE_URL": shared_cache(options),
        "API_THROTTLE_WHATIF": "100000/minute",
        "API_THROTTLE_EXPORT": "100000/hour",
    }


def shared_cache(options: argparse.Namespace) -> str:
    """The workers' cache, as in production (Redis: answers and throttles shared), emptied
    first so that no answer from an earlier run is served; locmem:// if Redis is down."""
    url = str(options.cache_url)
    if not url.startswith("redis"):
        return url
    import redis

    try:
        redis.Redis.from_url(url, socket_connect_timeout=2).flushdb()
    except redis.RedisError as error:
        print(f"no Redis at {url} ({error}): each worker keeps its own answers")
        return "locmem://"
    return url


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def start_gunicorn(port: int, env: dict[str, str]) -> subprocess.Popen[bytes]:
    gunicorn = Path(sys.executable).with_name("gunicorn")
    command = [
        str(gunicorn), "webapp.wsgi:application", "--workers", str(WORKERS),
        "--bind", f"127.0.0.1:{port}", "--timeout", "900", "--log-level", "warning",
    ]  # fmt: skip
    return subprocess.Popen(command, cwd=ROOT, env=env, start_new_session=True)


def stop_gunicorn(server: subprocess.Popen[bytes]) -> None:
    """SIGTERM to the arbiter we started; it stops its own workers."""
    if server.poll() is None:
        server.send_signal(signal.SIGTERM)
        try:
            server.wait(timeout=30)
        except subprocess.TimeoutExpired:
            server.kill()


def wait_until_up(port: int, token: str, timeout: float = 120.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            status, _, _ = request(port, token, "GET", "/api/v1/clusters")
            if status == 200:
                return
        except OSError:
            pass
        time.sleep(0.5)
    raise SystemExit("gunicorn did not answer in time")


# --- HTTP -----------------------------------------------------------------------------------


def request(
    port: int,
    token: str,
    method: str,
    path: str,
    body: dict[str, Any] | None = None,
    conn: http.client.HTTPConnection | None = None,
) -> tuple[int, int, float]:
    """(status, bytes read, seconds to the last byte)."""
    own = conn is None
    conn = conn or http.client.HTTPConnection("127.0.0.1", port, timeout=900)
    headers = {"Authorization": f"Bearer {token}", "Accept": "application/json"}
    payload = None
    if body is not None:
        payload = json.dumps(body).encode()
        headers["Content-Type"] = "application/json"
    start = time.perf_counter()
    conn.request(method, path, body=payload, headers=headers)
    response = conn.getresponse()
    size = 0
    while chunk := response.read(1 << 16):
        size += len(chunk)
    elapsed = time.perf_counter() - start
    if own:
        conn.close()
    return response.status, size, elapsed


def percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    index = min(len(ordered) - 1, max(0, round(share * (len(ordered) - 1))))
    return ordered[index]


# --- 1. fixed-rate load on the node list ------------------------------------------------------


@dataclass
class LoadResult:
    latencies_ms: list[float] = field(default_factory=list)  # from the scheduled send time
    service_ms: list[float] = field(default_factory=list)  # from the actual send
    errors: int = 0
    wall_seconds: float = 0.0


def fixed_rate_load(
    port: int, token: str, rate: float, seconds: float, in_flight: int
) -> LoadResult:
    """Send at `rate` per second for `seconds`, at most `in_flight` at once (threads with
    keep-alive connections); a request that must wait for a free thread still counts
    from when it was due."""
    due: queue.Queue[float | None] = queue.Queue()
    result, lock = LoadResult(), threading.Lock()

    def worker() -> None:
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
        while (scheduled := due.get()) is not None:
            sent = time.perf_counter()
            try:
                status, _, _ = request(port, token, "GET", NODES_PATH, conn=conn)
            except (OSError, http.client.HTTPException):
                status = 0
                conn.close()
                conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
            done = time.perf_counter()
            with lock:
                if status != 200:
                    result.errors += 1
                result.latencies_ms.append((done - scheduled) * 1000)
                result.service_ms.append((done - sent) * 1000)
        conn.close()

    threads = [threading.Thread(target=worker, daemon=True) for _ in range(in_flight)]
    for thread in threads:
        thread.start()
    start = time.perf_counter()
    for index in range(int(rate * seconds)):
        at = start + index / rate
        time.sleep(max(0.0, at - time.perf_counter()))
        due.put(at)
    for _ in threads:
        due.put(None)
    for thread in threads:
        thread.join()
    result.wall_seconds = time.perf_counter() - start
    return result


def _load_process(args: tuple[int, str, float, float, int], out: Any) -> None:
    out.send(asdict(fixed_rate_load(*args)))  # plain data: this module is __mp_main__ here
    out.close()


def node_list_under_load(port: int, token: str, options: argparse.Namespace) -> LoadResult:
    for _ in range(4 * WORKERS):  # every worker has served the page once
        request(port, token, "GET", NODES_PATH)
    context = multiprocessing.get_context("spawn")
    ours, theirs = context.Pipe(duplex=False)
    args = (port, token, options.rate, options.seconds, options.in_flight)
    client = context.Process(target=_load_process, args=(args, theirs))
    client.start()
    result = LoadResult(**ours.recv())
    client.join()
    return result


# --- 2. export against values() + orjson ------------------------------------------------------


def export_baseline() -> tuple[float, int]:
    """values() of the rows the export reads, in its order, dumped with orjson."""
    import orjson

    from topology.models import Cluster, Node, NodeTopology, Pod, QoSConfig, Reservation

    cluster = Cluster.objects.get(name=CLUSTER)
    start = time.perf_counter()
    size = 0
    queries = (
        Node.objects.filter(cluster=cluster).order_by("name").values(),
        NodeTopology.objects.filter(node__cluster=cluster).order_by("node__name").values("raw"),
        Pod.objects.filter(cluster=cluster).order_by("namespace", "name").values(),
        Reservation.objects.filter(cluster=cluster).order_by("name").values("raw"),
        QoSConfig.objects.filter(cluster=cluster).values(),
    )
    for rows in queries:
        size += len(orjson.dumps(list(rows)))
    return time.perf_counter() - start, size


def export_runs(port: int, token: str, runs: int) -> tuple[list[float], int]:
    times, size = [], 0
    for _ in range(runs):
        status, size, elapsed = request(port, token, "GET", EXPORT_PATH)
        if status != 200:
            raise SystemExit(f"export answered {status}")
        times.append(elapsed)
    return times, size


# --- 3. what-if -------------------------------------------------------------------------------


def pod_manifest(cpu: str, memory: str, *, exclusive: bool = False) -> dict[str, Any]:
    """A Guaranteed pod; `exclusive` also makes it an LSR pod, which Koordinator binds."""
    resources = {"cpu": cpu, "memory": memory}
    container = {"name": "app", "resources": {"requests": resources, "limits": resources}}
    spec: dict[str, Any] = {"containers": [container]}
    metadata: dict[str, Any] = {"name": "bench"}
    if exclusive:
        metadata["labels"] = {"koordinator.sh/qosClass": "LSR"}
        spec["priority"] = 9000
    return {"apiVersion": "v1", "kind": "Pod", "metadata": metadata, "spec": spec}


WHATIF_CASES: dict[str, dict[str, Any]] = {
    "small pod (500m, 512Mi)": {"pod": pod_manifest("500m", "512Mi")},
    "16-CPU exclusive pod (16, 32Gi, LSR)": {"pod": pod_manifest("16", "32Gi", exclusive=True)},
}
# A pod most nodes refuse (about 2,000 of 5,000 take it): every SingleNUMANode node whose
# NUMA nodes are each too small tries every mask, to quote them in its refusal.
LARGE_CASE = ("large pod (500m, 200Gi)", {"pod": pod_manifest("500m", "200Gi")})


def whatif_runs(port: int, token: str, body: dict[str, Any], warmup: int, runs: int) -> list[float]:
    """The same question, asked `warmup` times untimed and then `runs` times."""
    times = []
    for index in range(warmup + runs):
        status, _, elapsed = request(port, token, "POST", WHATIF_PATH, body)
        if status != 200:
            raise SystemExit(f"what-if answered {status}")
        if index >= warmup:
            times.append(elapsed)
    return times


def new_question(body: dict[str, Any], serial: int) -> dict[str, Any]:
    """`body` with its pod's memory raised by `serial` MiB: a question not asked before."""
    question = json.loads(json.dumps(body))
    for container in question["pod"]["spec"]["containers"]:
        for amounts in container["resources"].values():
            amounts["memory"] = f"{memory_mib(amounts['memory']) + serial}Mi"
    return question


def memory_mib(text: str) -> int:
    number, unit = int(text[:-2]), text[-2:]
    return number * {"Mi": 1, "Gi": 1024}[unit]


_SERIALS = itertools.count(1)


def new_question_runs(port: int, token: str, body: dict[str, Any], runs: int) -> list[float]:
    """A question never asked before, `runs` times: the engine runs every time."""
    times = []
    for _ in range(runs):
        question = new_question(body, next(_SERIALS))
        status, _, elapsed = request(port, token, "POST", WHATIF_PATH, question)
        if status != 200:
            raise SystemExit(f"what-if answered {status}")
        times.append(elapsed)
    return times


def warm_every_worker(port: int, token: str, rounds: int = 2) -> None:
    """For each case, as many new what-ifs at once as there are workers: a sync worker
    takes one at a time, so each runs the engine on each case (and builds what it keeps
    between requests). New questions, since one asked before comes from the shared cache."""
    for body in WHATIF_CASES.values():
        for _ in range(rounds):
            ask_at_once(port, token, [
                new_question({**body, "replicas": 1}, next(_SERIALS)) for _ in range(WORKERS)
            ])  # fmt: skip


def ask_at_once(port: int, token: str, questions: list[dict[str, Any]]) -> None:
    """The questions at the same time, each on a connection of its own (untimed)."""
    threads = [
        threading.Thread(target=request, args=(port, token, "POST", WHATIF_PATH, q))
        for q in questions
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()


def change_one_pod(step: int) -> None:
    """Relabel one bound pod through the sync's writer: the mirror version moves."""
    from topology.models import Cluster

    relabel_bound_pod(Cluster.objects.get(name=CLUSTER), step)


def after_a_change_runs(port: int, token: str, body: dict[str, Any], runs: int) -> list[float]:
    """A question asked before, each time right after a pod changed: every worker that
    answers refreshes its snapshot (only the changed node is read again) first. Every
    worker has answered it before (as a CI pipeline asking of a live cluster again and
    again), so what each keeps of the nodes that did not change serves it."""
    for step in range(2):
        change_one_pod(step)
        ask_at_once(port, token, [body] * WORKERS)
    times = []
    for step in range(2, runs + 2):
        change_one_pod(step)
        status, _, elapsed = request(port, token, "POST", WHATIF_PATH, body)
        if status != 200:
            raise SystemExit(f"what-if answered {status}")
        times.append(elapsed)
    return times


def kept_counts_ratio(body: dict[str, Any], runs: int) -> tuple[float, float]:
    """In-process engine time (ms, medians) of a question asked before, right after a pod
    changed: with the counts kept with unchanged nodes' books, and with every count worked
    out anew (`koordinator_cache.KEEP_COUNTS`), alternating on the same snapshots."""
    from scheduler_api.engine.koordinator import cache as koordinator_cache
    from topology.models import Cluster
    from topology.services.whatif.service import mirror_snapshot, run_on_snapshot

    cluster = Cluster.objects.get(name=CLUSTER)
    run_on_snapshot(mirror_snapshot(cluster), body["pod"], replicas=1, encoded=True)
    kept: list[float] = []
    anew: list[float] = []
    try:
        for step in range(runs):
            for keep, times in ((True, kept), (False, anew))[:: 1 if step % 2 else -1]:
                change_one_pod(1000 + 2 * step + keep)
                snapshot = mirror_snapshot(cluster)
                koordinator_cache.KEEP_COUNTS = keep
                start = time.perf_counter()
                run_on_snapshot(snapshot, body["pod"], replicas=1, encoded=True)
                times.append((time.perf_counter() - start) * 1000)
    finally:
        koordinator_cache.KEEP_COUNTS = True
    return statistics.median(kept), statistics.median(anew)


def engine_share(body: dict[str, Any]) -> tuple[float, float]:
    """In-process split of one what-if: (read the mirror, run the engine), seconds."""
    from topology.models import Cluster
    from topology.services.whatif.service import mirror_snapshot, run_on_snapshot

    start = time.perf_counter()
    snapshot = mirror_snapshot(Cluster.objects.get(name=CLUSTER))
    read = time.perf_counter() - start
    start = time.perf_counter()
    run_on_snapshot(snapshot, body["pod"], replicas=body["replicas"])
    return read, time.perf_counter() - start


# --- report -----------------------------------------------------------------------------------


def row(name: str, p50: float | str, p99: float | str, target: str, note: str = "") -> str:
    def cell(value: float | str) -> str:
        return f"{value:>10.1f}" if isinstance(value, float) else f"{value:>10}"

    return f"{name:<58} {cell(p50)} {cell(p99)}  {target:<16} {note}"


def verdict(ok: bool) -> str:
    return "met" if ok else "MISSED"


def target_row(name: str, seconds: list[float], detail: str = "") -> None:
    """A what-if row against the p99 <= 50 ms target (`detail`: else how far off)."""
    times = [t * 1000 for t in seconds]
    p99 = percentile(times, 0.99)
    detail = detail or f"{p99 / 50:.1f}x the target"
    print(row(name, statistics.median(times), p99, "p99 <= 50 ms",
              f"{verdict(p99 <= 50)}; {detail}, n={len(times)}"))  # fmt: skip


def main() -> None:
    options = parse_args()
    server_url = postgres_server()
    database_url, fresh = scratch_database(server_url, SCRATCH_DB, options.reuse_db)
    os.environ["DATABASE_URL"] = database_url
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "webapp.settings")
    import django

    django.setup()  # only now: settings read DATABASE_URL at import
    server = None
    try:
        seconds = seed(options.nodes) if fresh else 0.0
        token = operator_token()
        port = free_port()
        server = start_gunicorn(port, server_environment(options))
        wait_until_up(port, token)
        report(options, port, token, seconds)
    finally:
        if server is not None:
            stop_gunicorn(server)
        if not options.keep_db:
            drop_database(server_url, SCRATCH_DB)


def report(options: argparse.Namespace, port: int, token: str, seeded: float) -> None:
    from topology.models import Node, Pod

    print(f"cluster {CLUSTER!r}: {Node.objects.count()} nodes, {Pod.objects.count()} pods"
          + (f" (seeded in {seeded:.0f} s)" if seeded else " (reused)"))  # fmt: skip
    print(f"gunicorn: {WORKERS} workers on 127.0.0.1:{port}\n")
    print(row("measure (ms)", "p50", "p99", "target", "result"))
    if not options.only_whatif:
        node_list_and_export(port, token, options)
    whatif_report(port, token, options)


def node_list_and_export(port: int, token: str, options: argparse.Namespace) -> None:
    load = node_list_under_load(port, token, options)
    p99 = percentile(load.latencies_ms, 0.99)
    sent = len(load.latencies_ms)
    print(row(f"GET nodes?page_size=100 at {options.rate:g}/s for {options.seconds:g} s",
              statistics.median(load.latencies_ms), p99, "p99 <= 100 ms",
              f"{verdict(p99 <= 100)}; {sent} sent, {load.errors} errors, "
              f"{sent / load.wall_seconds:.1f}/s done"))  # fmt: skip
    print(row("  (service time, from the actual send)", statistics.median(load.service_ms),
              percentile(load.service_ms, 0.99), ""))  # fmt: skip
    base, base_bytes = min(export_baseline() for _ in range(options.export_runs))
    times, size = export_runs(port, token, options.export_runs)
    ratio = min(times) / base
    print(row(f"full export over HTTP ({size / 1e6:.1f} MB, best of {len(times)})",
              statistics.median(times) * 1000, max(times) * 1000, "<= 2x baseline",
              f"{verdict(ratio <= 2)}; {ratio:.1f}x"))  # fmt: skip
    print(row(f"  baseline: values() + orjson, same rows ({base_bytes / 1e6:.1f} MB)",
              base * 1000, base * 1000, ""))  # fmt: skip


def whatif_report(port: int, token: str, options: argparse.Namespace) -> None:
    warm_every_worker(port, token)
    for name, body in WHATIF_CASES.items():
        for replicas in (1, 10):
            question = {**body, "replicas": replicas}
            repeated = whatif_runs(port, token, question, options.warmup, options.whatif_runs)
            fresh = new_question_runs(port, token, question, options.whatif_runs)
            for kind, times in (("asked before", repeated), ("new question", fresh)):
                target_row(f"what-if {name}, replicas {replicas}, {kind}", times)
    for name, body in WHATIF_CASES.items():
        question = {**body, "replicas": 1, "capacity": False}
        times = new_question_runs(port, token, question, options.whatif_runs)
        target_row(f"what-if {name}, replicas 1, new question, capacity: false", times,
                   "by the opt-out (the default counts capacity)")  # fmt: skip
    name, body = LARGE_CASE
    times = new_question_runs(port, token, {**body, "replicas": 1}, options.whatif_runs)
    target_row(f"what-if {name}, replicas 1, new question", times)
    for name, body in WHATIF_CASES.items():
        question = {**body, "replicas": 1}
        times = [t * 1000 for t in after_a_change_runs(port, token, question, options.whatif_runs)]
        print(row(f"what-if {name.split(' (')[0]}, asked before, right after a pod changed",
                  statistics.median(times), percentile(times, 0.99), "(no target)",
                  f"n={len(times)}; snapshot refreshed node by node"))  # fmt: skip
    lsr = WHATIF_CASES["16-CPU exclusive pod (16, 32Gi, LSR)"]
    kept, anew = kept_counts_ratio(lsr, options.whatif_runs)
    print(
        f"\n16-CPU pod asked again after a change, in-process engine: {kept:.0f} ms with the "
        f"counts kept on unchanged nodes, {anew:.0f} ms counting all ({anew / kept:.1f}x)"
    )
    small = {**WHATIF_CASES[next(iter(WHATIF_CASES))], "replicas": 1}
    read, engine = engine_share(small)
    print(
        f"\nwhere a what-if's time goes (in-process, small pod): reading the mirror into a "
        f"snapshot {read * 1000:.0f} ms, the engine and its JSON {engine * 1000:.0f} ms"
    )


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--nodes", type=int, default=5000)
    parser.add_argument("--rate", type=float, default=20.0, help="node-list requests per second")
    parser.add_argument("--seconds", type=float, default=20.0, help="length of the node-list load")
    parser.add_argument("--in-flight", type=int, default=16, help="client threads (max in flight)")
    parser.add_argument("--export-runs", type=int, default=3)
    parser.add_argument("--warmup", type=int, default=1, help="what-if warm-up requests per case")
    parser.add_argument("--whatif-runs", type=int, default=3, help="timed what-ifs per case")
    parser.add_argument("--only-whatif", action="store_true", help="skip node list and export")
    parser.add_argument("--keep-db", action="store_true", help=f"keep the {SCRATCH_DB} database")
    parser.add_argument("--reuse-db", action="store_true", help="reuse a kept database as is")
    parser.add_argument(
        "--cache-url",
        default="redis://127.0.0.1:6379/9",
        help="the workers' CACHE_URL (its Redis database is emptied first); locmem:// for none",
    )
    return parser.parse_args()


if __name__ == "__main__":
    main()
