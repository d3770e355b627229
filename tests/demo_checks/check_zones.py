"""NRT zones read into one shape whatever the flavour, and the checks every flavour shares."""

from __future__ import annotations

from dataclasses import dataclass

from topology.demo.quantity import BATCH_CPU, BATCH_MEMORY, CPU, GPU, HUGEPAGES, MEMORY

from .check_index import Obj, resources, zone_index

CRANE = "crane"
KOORDINATOR = "koordinator"
UPSTREAM = "upstream"
TOTALLED = (CPU, MEMORY, GPU, BATCH_CPU, BATCH_MEMORY, *HUGEPAGES)


@dataclass
class ZoneValues:
    capacity: dict[str, int]
    allocatable: dict[str, int]
    available: dict[str, int] | None
    reserved_cpu_nums: int = 0


def nrt_flavour(nrt: Obj) -> str:
    if nrt.get("apiVersion", "").startswith("topology.crane.io/"):
        return CRANE
    if (
        nrt.get("metadata", {}).get("labels", {}).get("app.kubernetes.io/managed-by")
        == "Koordinator"
    ):
        return KOORDINATOR
    return UPSTREAM


def read_zones(nrt: Obj) -> dict[int, ZoneValues]:
    zones: dict[int, ZoneValues] = {}
    for zone in nrt.get("zones", []):
        if zone.get("type") != "Node":
            continue
        listing = zone.get("resources")
        if isinstance(listing, dict):
            values = ZoneValues(
                resources(listing.get("capacity")),
                resources(listing.get("allocatable")),
                None,
                int(listing.get("reservedCPUNums", 0)),
            )
        else:
            rows = listing or []
            values = ZoneValues(
                resources({row["name"]: row["capacity"] for row in rows}),
                resources({row["name"]: row["allocatable"] for row in rows}),
                resources({row["name"]: row["available"] for row in rows}),
            )
        zones[zone_index(zone["name"])] = values
    return zones


def check_zone_totals(node: Obj, zones: dict[int, ZoneValues]) -> list[str]:
    """Zone capacities add up to the node's; cpu and memory are always published."""
    name = node["metadata"]["name"]
    capacity = resources(node.get("status", {}).get("capacity"))
    problems = []
    for resource in TOTALLED:
        in_zones = [zone.capacity[resource] for zone in zones.values() if resource in zone.capacity]
        if not in_zones:
            if resource in (CPU, MEMORY) or (resource == GPU and capacity.get(GPU, 0) > 0):
                problems.append(f"NRT {name}: no zone publishes {resource}")
            continue
        if sum(in_zones) != capacity.get(resource, 0):
            problems.append(
                f"NRT {name}: zones' {resource} capacity sums to {sum(in_zones)}, "
                f"node capacity is {capacity.get(resource, 0)}"
            )
    return problems


def check_zone_bounds(name: str, zones: dict[int, ZoneValues]) -> list[str]:
    problems = []
    for index, zone in sorted(zones.items()):
        for resource, allocatable in zone.allocatable.items():
            available = (
                zone.available.get(resource, 0) if zone.available is not None else allocatable
            )
            capacity = zone.capacity.get(resource, 0)
            if not 0 <= available <= allocatable <= capacity:
                problems.append(
                    f"NRT {name} zone {index} {resource}: need 0 <= available ({available}) "
                    f"<= allocatable ({allocatable}) <= capacity ({capacity})"
                )
    return problems
