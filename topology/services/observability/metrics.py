"""`/metrics` in the Prometheus text format (issue 33), through `prometheus_client`.

Served from what is stored, never by judging nodes at scrape time:
- per cluster, node and NUMA zone, the figures the last figures run stored
  (`NodeFigures`: the NRT's resources per zone, free exclusive CPUs, CPUs held
  exclusively, in shared pools, reserved by kind) and per node the largest exclusive
  pod per Topology Manager policy, fragmentation and when its NRT last changed;
- per cluster, its figures' totals, sync lag and errors per collection, the open
  problems and findings, and the agreement rates of the last audit;
- per process, what-if requests and their latency (`WHATIF_REQUESTS`, `WHATIF_SECONDS`).

The per-node part (most of the samples: 5,000 nodes x 8 zones x 5 resources) changes
only when figures are recomputed: it is rendered once per figures run and kept, keyed by
each cluster's figures time, in this process and in Django's cache (shared by every
worker where that is Redis). Ages are exported as timestamps (`..._timestamp_seconds`),
as Prometheus advises: `time() - metric` is the age, always current.
"""

from __future__ import annotations

import gzip
import hashlib
import logging
from collections.abc import Iterable, Iterator
from typing import Any

from django.core.cache import cache
from django.db.models import Count, Max
from prometheus_client import (
    REGISTRY,
    CollectorRegistry,
    Counter,
    Histogram,
    generate_latest,
)
from prometheus_client.core import GaugeMetricFamily, Metric
from prometheus_client.registry import Collector

from topology.models import (
    AgreementSample,
    Cluster,
    ClusterFigureSample,
    Finding,
    NodeFigures,
    PodDiagnosis,
    SyncState,
)

logger = logging.getLogger(__name__)

PREFIX = "topolens"
ZONE_LABELS = ["cluster", "node", "numa_zone"]
AMOUNTS = ("capacity", "allocatable", "available")
MILLI = 1000

WHATIF_REQUESTS = Counter(f"{PREFIX}_whatif_requests", "What-ifs answered, by surface", ["surface"])
WHATIF_SECONDS = Histogram(
    f"{PREFIX}_whatif_duration_seconds",
    "Time to answer a what-if, by surface",
    ["surface"],
    buckets=(0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30),
)


def _gauge(name: str, help_text: str, labels: list[str]) -> GaugeMetricFamily:
    return GaugeMetricFamily(f"{PREFIX}_{name}", help_text, labels=labels)


# --- per node and NUMA zone: the stored figures ------------------------------------------------


class NodeFiguresCollector(Collector):
    """Every node's stored figures, of the given clusters."""

    def __init__(self, clusters: Iterable[Cluster]) -> None:
        self.clusters = list(clusters)

    def collect(self) -> Iterator[Metric]:
        families = _zone_families()
        for cluster in self.clusters:
            rows = (
                NodeFigures.objects.filter(node__cluster=cluster)
                .order_by("node__name")
                .values_list(
                    "node__name",
                    "zone_resources",
                    "zone_cpus",
                    "largest_exclusive_pod",
                    "fragmentation",
                    "free_cpus_total",
                    "node__topology__observed_at",
                )  # fmt: skip
            )
            for row in rows.iterator(chunk_size=1000):
                _add_node(families, cluster.name, row)
        yield from families.values()


def _zone_families() -> dict[str, GaugeMetricFamily]:
    resource = [*ZONE_LABELS, "resource"]
    families = {}
    for amount in AMOUNTS:
        families[f"cpu_{amount}"] = _gauge(
            f"numa_zone_cpu_{amount}_cpus", f"The zone's {amount} cpu as its NRT publishes it",
            ZONE_LABELS,
        )  # fmt: skip
        families[f"memory_{amount}"] = _gauge(
            f"numa_zone_memory_{amount}_bytes",
            f"The zone's {amount} memory or hugepages (resource) as its NRT publishes it",
            resource,
        )
        families[f"other_{amount}"] = _gauge(
            f"numa_zone_resource_{amount}",
            f"The zone's {amount} of another resource (devices: a count)",
            resource,
        )
    families["free"] = _gauge(
        "numa_zone_free_exclusive_cpus",
        "CPUs a new Guaranteed pod could be pinned to in the zone",
        ZONE_LABELS,
    )
    families["exclusive"] = _gauge(
        "numa_zone_exclusive_cpus", "CPUs held exclusively by pinned pods", ZONE_LABELS
    )
    families["shared"] = _gauge(
        "numa_zone_shared_cpus", "CPUs of the shared pool (not pinned, not reserved)", ZONE_LABELS
    )
    families["reserved"] = _gauge(
        "numa_zone_reserved_cpus",
        "CPUs reserved, by kind: kubelet, node (annotation), system-qos, reservation",
        [*ZONE_LABELS, "kind"],
    )
    families["largest"] = _gauge(
        "node_largest_exclusive_pod_cpus",
        "The largest exclusive pod the node admits, per Topology Manager policy",
        ["cluster", "node", "policy"],
    )
    families["node_free"] = _gauge(
        "node_free_exclusive_cpus", "Free exclusive CPUs of the node", ["cluster", "node"]
    )
    families["fragmentation"] = _gauge(
        "node_fragmentation_ratio",
        "1 - the largest zone's free exclusive CPUs / all the node's free exclusive CPUs",
        ["cluster", "node"],
    )
    families["nrt"] = _gauge(
        "node_nrt_updated_timestamp_seconds",
        "When the node's NRT last changed (time() minus it: its data age)",
        ["cluster", "node"],
    )
    return families


def _add_node(families: dict[str, GaugeMetricFamily], cluster: str, row: tuple[Any, ...]) -> None:
    node, resources, cpus, largest, fragmentation, free_total, nrt_at = row
    for numa, by_name in resources.items():
        labels = [cluster, node, numa]
        for name, values in by_name.items():
            _add_resource(families, labels, name, values)
    for numa, zone in cpus.items():
        labels = [cluster, node, numa]
        families["free"].add_metric(labels, zone["free"])
        if zone["exclusive"] is not None:
            families["exclusive"].add_metric(labels, zone["exclusive"])
            families["shared"].add_metric(labels, zone["shared"])
            for kind, count in zone["reserved"].items():
                families["reserved"].add_metric([*labels, kind], count)
    for policy, count in largest.items():
        families["largest"].add_metric([cluster, node, policy], count)
    families["node_free"].add_metric([cluster, node], free_total)
    families["fragmentation"].add_metric([cluster, node], fragmentation)
    if nrt_at is not None:
        families["nrt"].add_metric([cluster, node], nrt_at.timestamp())


def _add_resource(
    families: dict[str, GaugeMetricFamily], labels: list[str], name: str, values: list[Any]
) -> None:
    if name == "cpu":
        for amount, value in zip(AMOUNTS, values, strict=True):
            if value is not None:
                families[f"cpu_{amount}"].add_metric(labels, value / MILLI)
        return
    kind = "memory" if name == "memory" or name.startswith("hugepages-") else "other"
    for amount, value in zip(AMOUNTS, values, strict=True):
        if value is not None:
            families[f"{kind}_{amount}"].add_metric([*labels, name], value)


# --- per cluster: totals, sync, problems, agreement ------------------------------------------


class ClusterCollector(Collector):
    """Each cluster's figures totals, sync state, problems and agreement."""

    def __init__(self, clusters: Iterable[Cluster]) -> None:
        self.clusters = list(clusters)

    def collect(self) -> Iterator[Metric]:
        names = {cluster.pk: cluster.name for cluster in self.clusters}
        yield from _figure_totals(names)
        yield from _sync(names)
        yield from _problems(names)
        yield from _agreement(names)


def _latest(model: Any, names: dict[int, str], field: str) -> list[Any]:
    """The newest row of `model` per cluster (by `field`)."""
    newest = model.objects.filter(cluster_id__in=names).values("cluster_id").annotate(at=Max(field))
    wanted = {(row["cluster_id"], row["at"]) for row in newest}
    rows = model.objects.filter(cluster_id__in=names, **{f"{field}__in": {at for _, at in wanted}})
    return [row for row in rows if (row.cluster_id, getattr(row, field)) in wanted]


def _figure_totals(names: dict[int, str]) -> Iterator[Metric]:
    labels = ["cluster"]
    gauges = {
        "nodes": _gauge("cluster_nodes", "Nodes with figures", labels),
        "zones": _gauge("cluster_numa_zones", "NUMA zones with figures", labels),
        "free_cpus_total": _gauge(
            "cluster_free_exclusive_cpus", "Free exclusive CPUs of all nodes", labels
        ),
        "largest_free_block": _gauge(
            "cluster_largest_free_block_cpus", "The most free exclusive CPUs in one zone", labels
        ),
        "fragmentation": _gauge(
            "cluster_fragmentation_ratio",
            "1 - sum of each node's largest free zone / sum of all free exclusive CPUs",
            labels,
        ),
    }
    taken = _gauge("figures_timestamp_seconds", "When the figures were last recomputed", labels)
    largest = _gauge(
        "cluster_largest_exclusive_pod_cpus",
        "The largest exclusive pod some node admits, per Topology Manager policy",
        ["cluster", "policy"],
    )
    for sample in _latest(ClusterFigureSample, names, "taken_at"):
        name = names[sample.cluster_id]
        for field, gauge in gauges.items():
            gauge.add_metric([name], getattr(sample, field))
        taken.add_metric([name], sample.taken_at.timestamp())
        for policy, cpus in sample.largest_pod_by_policy.items():
            largest.add_metric([name, policy], cpus)
    yield from (*gauges.values(), taken, largest)


def _sync(names: dict[int, str]) -> Iterator[Metric]:
    labels = ["cluster", "collection"]
    lag = _gauge("sync_lag_seconds", "How far the mirror lags the cluster, per collection", labels)
    errors = _gauge(
        "sync_consecutive_errors", "Errors in a row syncing the collection (0: healthy)", labels
    )
    rows = SyncState.objects.filter(cluster_id__in=names).values_list(
        "cluster_id", "resource", "lag_seconds", "consecutive_errors"
    )
    for cluster_id, resource, lag_seconds, consecutive in rows:
        if lag_seconds is not None:
            lag.add_metric([names[cluster_id], resource], lag_seconds)
        errors.add_metric([names[cluster_id], resource], consecutive)
    yield from (lag, errors)


def _problems(names: dict[int, str]) -> Iterator[Metric]:
    problems = _gauge(
        "problem_pods", "Pending or rejected pods with a diagnosis, by state", ["cluster", "state"]
    )
    diagnoses = PodDiagnosis.objects.filter(cluster_id__in=names).values("cluster_id", "state")
    for row in diagnoses.annotate(count=Count("pk")):
        problems.add_metric([names[row["cluster_id"]], row["state"]], row["count"])
    findings = _gauge(
        "findings", "Topology data findings, by check and severity",
        ["cluster", "check", "severity"],
    )  # fmt: skip
    found = Finding.objects.filter(cluster_id__in=names).values("cluster_id", "kind", "severity")
    for row in found.annotate(count=Count("pk")):
        findings.add_metric([names[row["cluster_id"]], row["kind"], row["severity"]], row["count"])
    yield from (problems, findings)


def _agreement(names: dict[int, str]) -> Iterator[Metric]:
    labels = ["cluster", "system"]
    judged = _gauge("agreement_judged_pods", "Pods the last audit judged", labels)
    agree = _gauge("agreement_agree_pods", "Pods whose real placement the engine agrees", labels)
    ratio = _gauge("agreement_ratio", "Agreeing pods / judged pods, last audit", labels)
    for sample in _latest(AgreementSample, names, "taken_at"):
        for system, rate in sample.rates.items():
            labels_of = [names[sample.cluster_id], system]
            judged.add_metric(labels_of, rate["judged"])
            agree.add_metric(labels_of, rate["agree"])
            if rate["judged"]:
                ratio.add_metric(labels_of, rate["agree"] / rate["judged"])
    yield from (judged, agree, ratio)


# --- the exposition ---------------------------------------------------------------------------


def exposition(clusters: Iterable[Cluster] | None = None, *, gzipped: bool = False) -> bytes:
    """The whole `/metrics` body: the per-node part (rendered once per figures run), the
    per-cluster part, and this process's metrics. `gzipped`: as one gzip stream of
    several members (HTTP clients and Prometheus read them as one), the per-node member
    compressed once when rendered."""
    chosen = list(clusters if clusters is not None else Cluster.objects.order_by("name"))
    live = CollectorRegistry(auto_describe=False)
    live.register(ClusterCollector(chosen))
    rest = generate_latest(live) + generate_latest(REGISTRY)
    nodes = node_exposition(chosen)
    if gzipped:
        return nodes + gzip.compress(rest, compresslevel=GZIP_LEVEL)
    return gzip.decompress(nodes) + rest


GZIP_LEVEL = 1  # fast: 100 MB of text in well under a second, still about 1/15
_RENDERED: dict[str, bytes] = {}  # this process's last rendering, gzipped, by key


def node_exposition(clusters: list[Cluster]) -> bytes:
    """The per-node part, gzipped, kept while no cluster's figures changed: in this
    process, and in Django's cache for the other workers."""
    key = _figures_key(clusters)
    found = _RENDERED.get(key)
    if found is None:
        found = cache.get(key)
    if found is None:
        registry = CollectorRegistry(auto_describe=False)
        registry.register(NodeFiguresCollector(clusters))
        found = gzip.compress(generate_latest(registry), compresslevel=GZIP_LEVEL)
        cache.set(key, found, timeout=3600)
    if key not in _RENDERED:
        _RENDERED.clear()
        _RENDERED[key] = found
    return found


def warm_metrics() -> None:
    """Render the per-node part for the clusters' current figures now (after a figures
    run), so that no scrape pays for it: where Django's cache is shared (Redis), every
    web worker then finds it. A failure is logged: the figures are stored either way."""
    try:
        node_exposition(list(Cluster.objects.order_by("name")))
    except Exception:
        logger.exception("rendering /metrics after the figures run failed")


def forget_rendered() -> None:
    _RENDERED.clear()


def _figures_key(clusters: list[Cluster]) -> str:
    """Each cluster and when its figures were last computed, hashed."""
    computed = dict(
        NodeFigures.objects.filter(node__cluster__in=clusters)
        .values("node__cluster_id")
        .annotate(at=Max("computed_at"))
        .values_list("node__cluster_id", "at")
    )
    parts = [f"{c.pk}:{c.name}:{computed.get(c.pk)}" for c in clusters]
    return "metrics:nodes:" + hashlib.sha256("|".join(parts).encode()).hexdigest()
