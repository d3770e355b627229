"""Benchmark of the agreement audit (issue 32; prints figures, not a test).

On the demo generator's cluster of N nodes (every NRT flavour, about 24 pods a node,
read from its objects as `manage.py audit --objects` reads a dump, no database):
  1. a full audit of every running pod (target: 100k pods over 5,000 nodes <= 2 min in
     one worker), in pods replayed per second;
  2. the incremental audit after one node's data changed (target <= 2 s);
  3. the what-if's own rate in the same run, for comparison: one small pod asked over
     the whole cluster, in node verdicts per second (a replay judges one pod on one node).
Run: `python bench/audit.py [--nodes 5000]`.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from dataclasses import replace
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "webapp.settings")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--nodes", type=int, default=5000)
    args = parser.parse_args()

    import django

    django.setup()
    from scheduler_api.engine import ContainerSpec, PodSpec
    from scheduler_api.engine.whatif.evaluate import place
    from topology.demo import generate_demo_objects
    from topology.services.audit.store import Kept, audit_facts
    from topology.services.diagnosis.offline import facts_from_objects

    start = time.perf_counter()
    facts = facts_from_objects(generate_demo_objects(nodes=args.nodes, seed=args.nodes)).facts
    live = sum(len(pods) for pods in facts.live_pods_by_node.values())
    print(f"cluster: {args.nodes} nodes, {live} running pods (built in "
          f"{time.perf_counter() - start:.0f} s)")  # fmt: skip

    kept = Kept()
    start = time.perf_counter()
    audits, replayed = audit_facts(facts, kept)
    full = time.perf_counter() - start
    scaled = full * 100_000 / max(replayed, 1)
    print(f"full audit: {replayed} pods in {full:.1f} s = {replayed / full:.0f} pods/s "
          f"(100k pods at this rate: {scaled:.0f} s; target <= 120 s: "
          f"{'met' if scaled <= 120 else 'MISSED'})")  # fmt: skip

    changed = max(facts.live_pods_by_node, key=lambda n: len(facts.live_pods_by_node[n]))
    nodes = tuple(replace(n) if n.name == changed else n for n in facts.snapshot.nodes)
    moved = replace(facts, snapshot=replace(facts.snapshot, nodes=nodes))
    start = time.perf_counter()
    _, again = audit_facts(moved, kept)
    incremental = time.perf_counter() - start
    print(f"incremental after one node changed: {again} pods replayed in {incremental:.2f} s "
          f"(target <= 2 s: {'met' if incremental <= 2 else 'MISSED'})")  # fmt: skip

    amounts = {"cpu": 500, "memory": 512 << 20}
    times = []
    for i in range(5):
        pod = PodSpec("default", f"bench-{i}", containers=(ContainerSpec("c", amounts, amounts),))
        started = time.perf_counter()
        place(facts.snapshot, pod, 1, capacity=False)
        times.append(time.perf_counter() - started)
    whatif = statistics.median(times)
    verdicts = len(facts.snapshot.nodes) / whatif
    print(f"what-if over the cluster (small pod, no capacity): {whatif * 1000:.0f} ms = "
          f"{verdicts:.0f} node verdicts/s; the audit replays {replayed / full:.0f} pods/s, "
          f"{verdicts / (replayed / full):.0f}x fewer judgements per second than the what-if "
          "(each replay judges one pod on one rebuilt node and places it in detail)")  # fmt: skip
    kinds = ("agree", "differs", "not-judgeable")
    verdicts_seen = {v: sum(a.verdict == v for a in audits.values()) for v in kinds}
    print(f"verdicts: {verdicts_seen}")


if __name__ == "__main__":
    main()
