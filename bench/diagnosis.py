"""Benchmark of the diagnosis (issue 30; prints figures, not a test).

Offline, on the demo generator's cluster (every NRT flavour; no database): N nodes and
P Pending pods (the demo's wide pod, P copies of varying size), and measures
  1. the baseline: the what-if of the same pods on the same snapshot (`place` with no
     replicas and no capacity count, as a what-if asked with `capacity: false`);
  2. `diagnose_pods`: the same judgement plus refusals, nearest misses and alignment;
  3. `find_all`: the data-truth checks over every node and pod;
and prints each with its ratio to the baseline. The database side (a cold refresh from
PostgreSQL, one pod changed, the Problems page and the API) is not measured here yet.
Run: `python bench/diagnosis.py [--nodes 1000] [--pending 200] [--runs 3]`.
"""

from __future__ import annotations

import argparse
import copy
import os
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "webapp.settings")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--nodes", type=int, default=1000)
    parser.add_argument("--pending", type=int, default=200)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()

    import django

    django.setup()
    from scheduler_api.engine import Scheduler, place, resolve_judge
    from topology.demo import generate_demo_objects
    from topology.services.diagnosis.findings import find_all
    from topology.services.diagnosis.offline import facts_from_objects
    from topology.services.diagnosis.pods import diagnose_pods

    objects = with_pending(generate_demo_objects(nodes=args.nodes), args.pending)
    started = time.perf_counter()
    facts = facts_from_objects(objects).facts
    parsed = time.perf_counter() - started
    print(f"{args.nodes} nodes, {len(facts.pods)} pods, parsed in {parsed:.2f} s")
    pending = [p for p in facts.pods if p.pending or p.rejected]
    print(f"{len(pending)} pods to diagnose, {len(facts.snapshot.nodes)} nodes")

    def whatif_of_the_same_pods() -> None:
        for pod in pending:
            judge = resolve_judge(pod.spec, pod.scheduler_name, facts.profiles, Scheduler.AUTO)
            result = place(
                facts.snapshot,
                pod.spec,
                0,
                scheduler=judge.system.value,
                capacity=False,
                profile=judge.profile,
                detailed=0,
            )
            list(result.nodes)

    baseline = timed(whatif_of_the_same_pods, args.runs)
    diagnoses = timed(lambda: diagnose_pods(facts), args.runs)
    findings = timed(lambda: find_all(facts), args.runs)
    print(f"{'what-if of the same pods (baseline)':<40} {baseline:8.2f} s   1.00x")
    print(f"{'diagnose_pods':<40} {diagnoses:8.2f} s   {diagnoses / baseline:.2f}x")
    print(f"{'find_all (data-truth checks)':<40} {findings:8.2f} s   {findings / baseline:.2f}x")


def with_pending(objects: list[dict], count: int, shapes: int = 8) -> list[dict]:
    """The demo plus `count` copies of its Pending pod in `shapes` sizes (0 to
    `shapes` - 1 CPUs wider), as replicas of a few workloads are."""
    template = next(
        o for o in objects if o["kind"] == "Pod" and o["metadata"]["name"] == "wide-join-0"
    )
    extra = []
    for index in range(count):
        pod = copy.deepcopy(template)
        pod["metadata"]["name"] = f"wide-join-b{index}"
        pod["metadata"]["uid"] = f"bench-{index}"
        cpu = int(pod["spec"]["containers"][0]["resources"]["requests"]["cpu"]) + index % shapes
        amounts = {"cpu": str(cpu), "memory": f"{cpu * 4}Gi"}
        pod["spec"]["containers"][0]["resources"] = {"requests": amounts, "limits": amounts}
        extra.append(pod)
    return objects + extra


def timed(work: Callable[[], object], runs: int) -> float:
    """The median of `runs` wall times, in seconds."""
    times = []
    for _ in range(runs):
        started = time.perf_counter()
        work()
        times.append(time.perf_counter() - started)
    return statistics.median(times)


if __name__ == "__main__":
    main()
