"""The demo cluster has a DRA GPU node: a ResourceSlice of four GPUs, two per NUMA zone,
one held by a running pod through a ResourceClaim."""

from __future__ import annotations

from collections import Counter

import pytest

from topology.demo import generate_demo_objects
from topology.models import Cluster
from topology.parsers.resource_slice import parse_resource_claim, parse_resource_slice
from topology.selectors.dra import by_numa_node, node_dra_devices
from topology.services.mirror.importer import import_objects


def of_kind(objects: list[dict], kind: str) -> list[dict]:
    return [obj for obj in objects if obj["kind"] == kind]


@pytest.mark.parametrize("nodes", [4, 40])
def test_the_demo_publishes_four_gpus_two_per_numa_zone_on_one_node(nodes: int) -> None:
    objects = generate_demo_objects(nodes=nodes, seed=1)
    # the GPU driver's; from 17 nodes the DRA CPU driver publishes an AMD node's CPUs too
    (slice_,) = [
        parsed
        for parsed in map(parse_resource_slice, of_kind(objects, "ResourceSlice"))
        if parsed.driver == "gpu.nvidia.com"
    ]
    assert slice_.node_name == "intel-2s-01"
    assert Counter(device.numa_node for device in slice_.devices) == {0: 2, 1: 2}
    assert {d.numa_attribute for d in slice_.devices} == {"resource.kubernetes.io/numaNode"}
    node = next(n for n in of_kind(objects, "Node") if n["metadata"]["name"] == slice_.node_name)
    zones = [
        z
        for nrt in of_kind(objects, "NodeResourceTopology")
        if nrt["metadata"]["name"] == slice_.node_name
        for z in nrt.get("zones", [])
        if z.get("type") == "Node"
    ]
    assert len(zones) == 2 and "nvidia.com/gpu" not in node["status"]["capacity"]


def test_the_demo_claim_holds_gpu_0_for_a_running_pod_that_names_it() -> None:
    objects = generate_demo_objects(nodes=6, seed=2)
    (claim,) = [parse_resource_claim(obj) for obj in of_kind(objects, "ResourceClaim")]
    assert [(d.driver, d.pool, d.device) for d in claim.allocated] == [
        ("gpu.nvidia.com", "intel-2s-01", "gpu-0")
    ]
    (consumer,) = claim.reserved_for
    pod = next(
        p
        for p in of_kind(objects, "Pod")
        if (p["metadata"]["namespace"], p["metadata"]["name"]) == (claim.namespace, consumer.name)
    )
    assert pod["metadata"]["uid"] == consumer.uid
    assert pod["spec"]["nodeName"] == "intel-2s-01" and pod["status"]["phase"] == "Running"
    assert pod["spec"]["resourceClaims"] == [{"name": "gpu", "resourceClaimName": claim.name}]


def test_the_demo_with_its_dra_objects_is_deterministic() -> None:
    objects = generate_demo_objects(nodes=5, seed=3)
    again = generate_demo_objects(nodes=5, seed=3)
    assert objects == again
    kinds = Counter(obj["kind"] for obj in objects)
    assert kinds["ResourceSlice"] == kinds["ResourceClaim"] == 1


@pytest.mark.django_db
def test_the_seeded_demo_shows_the_gpu_node_with_one_gpu_held() -> None:
    summary = import_objects(cluster_name="demo", objects=generate_demo_objects(nodes=4, seed=0))
    assert summary.ok, summary.errors
    groups = by_numa_node(node_dra_devices(Cluster.objects.get(name="demo"), "intel-2s-01"))
    assert [(group.title, len(group.devices), group.held) for group in groups] == [
        ("NUMA 0", 2, 1),
        ("NUMA 1", 2, 0),
    ]
