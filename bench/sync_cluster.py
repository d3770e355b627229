"""The benchmark's cluster: Koordinator-managed nodes with 8 NUMA zones and 384 CPUs
each (NRT v1alpha1 with the koordlet CPU topology annotation), pods with exclusive
cpusets, a few Reservations and the QoS ConfigMap, served by the tests' fake API server
in a process of its own (so that its CPU and memory are not the sync's)."""

from __future__ import annotations

import json
import random
import time
from collections.abc import Iterator
from multiprocessing.connection import Connection
from typing import Any

from tests.sync.fakekube import FakeCluster, FakeKubeServer

SOCKETS, ZONES, CPUS = 2, 8, 384
CORES = CPUS // 2  # two hyperthreads a core
CPUS_PER_ZONE = CPUS // ZONES
MEMORY_PER_ZONE = 192 * 2**30
EMITTED_AT = "bench.topolens.io/emitted-at"


def cpu_topology() -> str:
    """koordlet's node.koordinator.sh/cpu-topology: CPU i and i+192 share a core."""
    detail = []
    for cpu in range(CPUS):
        core = cpu % CORES
        zone = core // (CORES // ZONES)
        detail.append({"id": cpu, "core": core, "socket": zone // (ZONES // SOCKETS), "node": zone})
    return json.dumps({"detail": detail})


def node(index: int) -> dict[str, Any]:
    name = f"node-{index:05d}"
    capacity = {"cpu": str(CPUS), "memory": f"{ZONES * 192}Gi", "pods": "250"}
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {
            "name": name,
            "labels": {
                "kubernetes.io/hostname": name,
                "topology.kubernetes.io/zone": f"zone-{index % 3}",
                "node.koordinator.sh/numa-topology-policy": "SingleNUMANode",
            },
        },
        "status": {"capacity": capacity, "allocatable": {**capacity, "cpu": str(CPUS - 4)}},
    }


def nrt(index: int, topology: str, pods: int) -> dict[str, Any]:
    zones = []
    for zone in range(ZONES):
        held = sum(4 for j in range(pods) if j % 4 == 0 and (j // 4) % ZONES == zone)
        cpu = str(CPUS_PER_ZONE)
        zones.append(
            {
                "name": f"node-{zone}",
                "type": "Node",
                "costs": [
                    {"name": f"node-{z}", "value": 10 if z == zone else 21} for z in range(ZONES)
                ],
                "resources": [
                    {
                        "name": "cpu",
                        "capacity": cpu,
                        "allocatable": cpu,
                        "available": str(CPUS_PER_ZONE - held),
                    },
                    {
                        "name": "memory",
                        "capacity": str(MEMORY_PER_ZONE),
                        "allocatable": str(MEMORY_PER_ZONE),
                        "available": str(MEMORY_PER_ZONE),
                    },
                ],
            }
        )
    return {
        "apiVersion": "topology.node.k8s.io/v1alpha1",
        "kind": "NodeResourceTopology",
        "metadata": {
            "name": f"node-{index:05d}",
            "labels": {"app.kubernetes.io/managed-by": "Koordinator"},
            "annotations": {
                "node.koordinator.sh/cpu-topology": topology,
                "kubelet.koordinator.sh/cpu-manager-policy": '{"policy":"none"}',
                "node.koordinator.sh/pod-cpu-allocs": "null",
            },
        },
        "topologyPolicies": ["SingleNUMANodePodLevel"],
        "zones": zones,
    }


def pod(node_index: int, slot: int) -> dict[str, Any]:
    """Every fourth pod holds 4 exclusive CPUs on one zone (Koordinator resource-status)."""
    exclusive = slot % 4 == 0
    cpu = "4" if exclusive else "500m"
    resources = {"requests": {"cpu": cpu, "memory": "4Gi"}, "limits": {"cpu": cpu, "memory": "4Gi"}}
    annotations = {}
    if exclusive:
        zone = (slot // 4) % ZONES
        first = zone * (CORES // ZONES) + (slot // (4 * ZONES)) * 2
        cpus = [first, first + 1, first + CORES, first + 1 + CORES]
        annotations["scheduling.koordinator.sh/resource-status"] = json.dumps(
            {
                "cpuset": ",".join(map(str, cpus)),
                "numaNodeResources": [{"node": zone, "resources": {"cpu": "4", "memory": "4Gi"}}],
            }
        )
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": f"app-{node_index:05d}-{slot:02d}",
            "namespace": f"team-{node_index % 20:02d}",
            "labels": {"app": f"app-{slot % 7}", "tier": "bench"},
            "annotations": annotations,
            "ownerReferences": [
                {
                    "apiVersion": "apps/v1",
                    "kind": "ReplicaSet",
                    "name": f"app-{slot % 7}-rs",
                    "uid": f"rs-{slot % 7}",
                    "controller": True,
                }
            ],
        },
        "spec": {
            "nodeName": f"node-{node_index:05d}",
            "schedulerName": "koord-scheduler",
            "priority": 9000 if exclusive else 0,
            "containers": [{"name": "main", "resources": resources}],
        },
        "status": {"phase": "Running", "qosClass": "Guaranteed"},
    }


def objects(nodes: int, pods_per_node: int) -> Iterator[dict[str, Any]]:
    topology = cpu_topology()  # one string, shared by every NRT
    for index in range(nodes):
        yield node(index)
        yield nrt(index, topology, pods_per_node)
    for index in range(nodes):
        for slot in range(pods_per_node):
            yield pod(index, slot)
    yield {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": "slo-controller-config", "namespace": "koordinator-system"},
        "data": {
            "resource-qos-config": json.dumps(
                {
                    "clusterStrategy": {
                        "beClass": {"resctrlQOS": {"enable": True, "catRangeEndPercent": 30}}
                    }
                }
            )
        },
    }


def serve(connection: Connection, nodes: int, pods_per_node: int) -> None:
    """Run in a child process: build the cluster, serve it, stream events on demand."""
    cluster = FakeCluster(
        groups={"topology.node.k8s.io": ("v1alpha1",), "scheduling.koordinator.sh": ("v1alpha1",)}
    )
    started = time.monotonic()
    cluster.load(objects(nodes, pods_per_node), copy_objects=False)
    server = FakeKubeServer(cluster, bookmark_interval=5.0).start()
    connection.send(("ready", server.url, server.token, round(time.monotonic() - started, 1)))
    while True:
        command, *args = connection.recv()
        if command == "stream":
            connection.send(("streamed", stream(cluster, *args)))
        else:
            break
    server.stop()


def stream(cluster: FakeCluster, rate: float, seconds: float) -> int:
    """Modify distinct pods at a steady rate, each stamped with the time it was emitted."""
    pods = list(cluster.objects[("", "pods")].values())
    random.Random(7).shuffle(pods)
    count = int(rate * seconds)
    start = time.monotonic()
    for index in range(count):
        pause = start + index / rate - time.monotonic()
        if pause > 0:
            time.sleep(pause)
        changed = {**pods[index % len(pods)]}
        changed["metadata"] = {
            **changed["metadata"],
            "labels": {**changed["metadata"]["labels"], EMITTED_AT: f"{time.time():.6f}"},
        }
        cluster.put(changed)
    return count
