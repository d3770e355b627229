"""Crane NRTs: no `available`; crane-scheduler's topology-results must fit each zone."""

from __future__ import annotations

import json
import math

from topology.demo.quantity import CPU
from topology.parsers.quantity import parse_quantity

from .check_index import ClusterIndex, Obj, resources, zone_index
from .check_zones import ZoneValues, check_zone_bounds

CPU_POLICY = "topology.crane.io/cpu-policy"
TOPOLOGY_RESULT = "topology.crane.io/topology-result"


def target_millis(pod: Obj) -> int:
    """Integer-CPU containers with requests == limits, unless the pod's policy is none."""
    if pod["metadata"].get("annotations", {}).get(CPU_POLICY) == "none":
        return 0
    total = 0
    for container in pod.get("spec", {}).get("containers", []):
        requests = resources(container.get("resources", {}).get("requests"))
        limits = resources(container.get("resources", {}).get("limits"))
        cpu = requests.get(CPU, 0)
        if cpu and cpu % 1000 == 0 and limits.get(CPU) == cpu:
            total += cpu
    return total


def check_crane(
    index: ClusterIndex, node: Obj, nrt: Obj, zones: dict[int, ZoneValues]
) -> list[str]:
    name = node["metadata"]["name"]
    problems = check_zone_bounds(name, zones)
    if any(zone.available is not None for zone in zones.values()):
        problems.append(f"NRT {name}: Crane zones have no available field")
    problems += _check_reserved(name, nrt, zones)
    used = dict.fromkeys(zones, 0)
    for pod in index.active_pods(name):
        problems += _add_result(pod, zones, used)
    for zone, millis in sorted(used.items()):
        if millis > zones[zone].allocatable.get(CPU, 0):
            problems.append(
                f"NRT {name} zone {zone}: topology-results hold {millis}m cpu, over allocatable"
            )
    return problems


def _add_result(pod: Obj, zones: dict[int, ZoneValues], used: dict[int, int]) -> list[str]:
    raw = pod["metadata"].get("annotations", {}).get(TOPOLOGY_RESULT)
    who = f"Pod {pod['metadata']['namespace']}/{pod['metadata']['name']}"
    if raw is None:
        return [f"{who}: pinned CPUs but no topology-result"] if target_millis(pod) else []
    total = 0
    for entry in json.loads(raw):
        zone = zone_index(entry["name"])
        if zone not in zones:
            return [f"{who}: topology-result names unknown zone {entry['name']}"]
        millis = resources(entry.get("resources", {}).get("capacity")).get(CPU, 0)
        used[zone] += millis
        total += millis
    if total != target_millis(pod):
        return [f"{who}: topology-result places {total}m cpu, the pod pins {target_millis(pod)}m"]
    return []


def _check_reserved(name: str, nrt: Obj, zones: dict[int, ZoneValues]) -> list[str]:
    reserved = parse_quantity(nrt.get("reserved", {}).get(CPU, "0"))
    taken = sum(zone.capacity.get(CPU, 0) - zone.allocatable.get(CPU, 0) for zone in zones.values())
    problems = []
    if taken != reserved * 1000:
        problems.append(f"NRT {name}: zones hold back {taken}m cpu, reserved says {reserved}")
    if sum(zone.reserved_cpu_nums for zone in zones.values()) != math.ceil(reserved):
        problems.append(f"NRT {name}: reservedCPUNums do not add up to ceil(reserved cpu)")
    return problems
