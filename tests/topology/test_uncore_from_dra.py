"""Uncore (L3) caches read from the DRA CPU driver's per-CPU devices, the one publisher
of the kubelet's UncoreCacheID: from a dump and from the mirror, the same."""

from __future__ import annotations

import json
from copy import deepcopy
from pathlib import Path
from typing import Any

import pytest

from scheduler_api.engine import kubelet_rules
from tests.topology.dra_objects import resource_slice
from topology.adapters import snapshot_from_objects
from topology.adapters.mirror import node_snapshots
from topology.models import Cluster
from topology.services.mirror.importer import import_objects

SAMPLE = Path(__file__).resolve().parent.parent / "samples" / "node-koordinator-v1alpha1.json"
NODE = "worker-03"


def sample_objects() -> list[dict[str, Any]]:
    data = json.loads(SAMPLE.read_text())
    return deepcopy(data["items"] if isinstance(data, dict) else data)


def cpu_table(objects: list[dict[str, Any]]) -> list[dict[str, int]]:
    nrt = next(o for o in objects if o["kind"] == "NodeResourceTopology")
    return json.loads(nrt["metadata"]["annotations"]["node.koordinator.sh/cpu-topology"])["detail"]


def cpu_devices(cpus: list[dict[str, int]], cache_of: dict[int, int]) -> list[dict[str, Any]]:
    """The DRA CPU driver's individual devices: one per CPU, as it names them."""
    return [
        {
            "name": f"cpudev{cpu['id']:03d}",
            "attributes": {
                "dra.cpu/cpuID": {"int": cpu["id"]},
                "dra.cpu/coreID": {"int": cpu["core"]},
                "dra.cpu/socketID": {"int": cpu["socket"]},
                "dra.cpu/numaNodeID": {"int": cpu["node"]},
                "dra.cpu/cacheL3ID": {"int": cache_of[cpu["id"]]},
                "resource.kubernetes.io/numaNode": {"int": cpu["node"]},
            },
        }
        for cpu in cpus
    ]


def with_cpu_slice(cache_of_cpu: Any) -> tuple[list[dict[str, Any]], dict[int, int]]:
    objects = sample_objects()
    cpus = cpu_table(objects)
    caches = {cpu["id"]: cache_of_cpu(cpu) for cpu in cpus}
    objects.append(
        resource_slice("cpu-slice", cpu_devices(cpus, caches), node=NODE, driver="dra.cpu")
    )
    return objects, caches


def by_four_cores(cpu: dict[str, int]) -> int:
    return cpu["core"] // 4


def test_a_dump_gives_each_cpu_its_uncore_cache() -> None:
    objects, caches = with_cpu_slice(by_four_cores)
    node = snapshot_from_objects(objects).nodes[0]
    assert dict(node.uncore_caches) == caches
    assert len(set(caches.values())) > 1


def test_without_the_cpu_driver_the_uncore_caches_are_unknown() -> None:
    node = snapshot_from_objects(sample_objects()).nodes[0]
    assert node.uncore_caches == {}


def test_cpu_devices_that_do_not_name_the_cpu_table_are_not_used() -> None:
    objects, _ = with_cpu_slice(by_four_cores)
    devices = objects[-1]["spec"]["devices"]
    del devices[0]  # one CPU of the table is missing
    assert snapshot_from_objects(objects).nodes[0].uncore_caches == {}


@pytest.mark.django_db
def test_the_mirror_reads_the_same_uncore_caches_as_the_dump() -> None:
    objects, caches = with_cpu_slice(by_four_cores)
    import_objects(cluster_name="c", objects=objects)
    (node,) = node_snapshots(Cluster.objects.get(name="c"), [NODE])
    assert dict(node.uncore_caches) == caches


def test_the_kubelet_rules_say_the_uncore_caches_are_published() -> None:
    objects, caches = with_cpu_slice(by_four_cores)
    for obj in objects:  # the kubelet runs the option that reads them
        if obj["kind"] == "NodeResourceTopology":
            annotations = obj["metadata"]["annotations"]
            annotations["kubelet.koordinator.sh/cpu-manager-policy"] = json.dumps(
                {"policy": "static", "options": {"prefer-align-cpus-by-uncorecache": "true"}}
            )
    cpu_rule = kubelet_rules(snapshot_from_objects(objects).nodes[0])[0]
    count = len(set(caches.values()))
    assert f"prefer-align-cpus-by-uncorecache ({count} uncore caches" in cpu_rule
