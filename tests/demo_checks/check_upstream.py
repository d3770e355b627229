"""Upstream (NFD) NRTs: available = allocatable − what running pods hold.

The flavour does not say which zone a pod sits on. So, per resource, the zones'
(allocatable − available) must sum to the node's Guaranteed pods' exclusive CPUs,
memory and hugepages plus every running pod's GPUs; and where the Topology Manager keeps a pod (or
container) on one zone, some such placement must explain every zone exactly.
"""

from __future__ import annotations

from scheduler_api.engine import QoSClass
from topology.demo.qos import exclusive_cpus, spec_pod
from topology.demo.quantity import CPU, GPU, HUGEPAGES, MEMORY

from .check_index import ClusterIndex, Obj, pod_requests, resources
from .check_upstream_zones import alignment_units, zones_explained
from .check_zones import ZoneValues, check_zone_bounds

_POLICY_PREFIXES = {
    "single-numa-node": "SingleNUMANode",
    "restricted": "Restricted",
    "best-effort": "BestEffort",
}


def held_by_pods(pods: list[Obj]) -> dict[str, int]:
    held = dict.fromkeys((CPU, MEMORY, GPU, *HUGEPAGES), 0)
    for pod in pods:
        engine_pod = spec_pod(pod.get("spec", {}))
        requests = pod_requests(pod)
        held[GPU] += requests.get(GPU, 0)
        if engine_pod.qos_class == QoSClass.GUARANTEED:
            held[CPU] += exclusive_cpus(engine_pod) * 1000
            for resource in (MEMORY, *HUGEPAGES):  # the Memory Manager's blocks
                held[resource] += requests.get(resource, 0)
    return held


def check_upstream(
    index: ClusterIndex, node: Obj, nrt: Obj, zones: dict[int, ZoneValues]
) -> list[str]:
    name = node["metadata"]["name"]
    problems = check_zone_bounds(name, zones)
    held = held_by_pods(index.active_pods(name))
    for resource, expected in held.items():
        published = sum(
            z.allocatable.get(resource, 0) - (z.available or {}).get(resource, 0)
            for z in zones.values()
        )
        if published != expected:
            problems.append(
                f"NRT {name}: zones show {resource} {published} in use, pods hold {expected}"
            )
    allocatable = resources(node.get("status", {}).get("allocatable"))
    for resource in (CPU, MEMORY, *HUGEPAGES):
        total = sum(zone.allocatable.get(resource, 0) for zone in zones.values())
        if total != allocatable.get(resource, 0):
            problems.append(
                f"NRT {name}: zones' {resource} allocatable {total} != node's "
                f"{allocatable.get(resource)}"
            )
    return problems + _check_policies(name, nrt) + _check_placement(index, name, nrt, zones)


def _check_placement(
    index: ClusterIndex, name: str, nrt: Obj, zones: dict[int, ZoneValues]
) -> list[str]:
    policy = (nrt.get("topologyPolicies") or ["None"])[0]
    units = [unit for pod in index.active_pods(name) for unit in alignment_units(pod, policy)]
    if not units or zones_explained(units, zones) is not False:
        return []
    return [
        f"NRT {name}: no {policy} placement of the running pods explains every zone's available"
    ]


def _check_policies(name: str, nrt: Obj) -> list[str]:
    policies = nrt.get("topologyPolicies") or []
    if not policies:
        return [f"NRT {name}: topologyPolicies is required here"]
    attributes = {item["name"]: item["value"] for item in nrt.get("attributes", [])}
    policy, scope = attributes.get("topologyManagerPolicy"), attributes.get("topologyManagerScope")
    if policy is None:
        return []
    prefix = _POLICY_PREFIXES.get(policy)
    expected = (
        "None" if prefix is None else prefix + ("PodLevel" if scope == "pod" else "ContainerLevel")
    )
    if policies[0] != expected:
        return [
            f"NRT {name}: topologyPolicies {policies[0]} disagrees with attributes {policy}/{scope}"
        ]
    return []
