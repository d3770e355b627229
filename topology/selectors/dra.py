"""A node's DRA devices (ResourceSlices), grouped by NUMA node, each marked held or free.

A device is held when an allocated ResourceClaim names it by (driver, pool, device)
(kubernetes staging/src/k8s.io/api/resource/v1/types.go, DeviceRequestAllocationResult).
Only the newest generation of each pool counts (`domain.dra_pools`). Shown, not
judged: the what-if does not consider these devices yet. Two queries per node.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass
from operator import itemgetter
from typing import Any

from django.db.models import F

from topology.domain.dra_pools import newest_generation
from topology.figures import fmt
from topology.models import Cluster, ResourceClaimDevice, ResourceSliceDevice

DeviceId = tuple[str, str, str]  # (driver, pool, device)
# Attributes shown beside a device's name, by their name within the driver's domain.
DISPLAY_ATTRIBUTES = ("productName", "model", "type", "architecture", "family")
_GENERATION = F("resource_slice__pool_generation")


@dataclass(frozen=True)
class Holder:
    """A claim holding a device, and the pods it is reserved for."""

    claim: str  # namespace/name
    request: str
    pods: tuple[str, ...]  # namespace/name of each pod in status.reservedFor


@dataclass(frozen=True)
class DRADevice:
    driver: str
    pool: str
    name: str
    numa_node: int | None
    numa_attribute: str
    attributes: dict[str, Any]
    capacity: dict[str, int]  # qualified name → exact integer (bytes, counts)
    held_by: tuple[Holder, ...]

    @property
    def held(self) -> bool:
        return bool(self.held_by)

    @property
    def label(self) -> str:
        """The device's few telling attributes ("NVIDIA A100, gpu"), for people."""
        values = [_short_value(self.attributes, self.driver, key) for key in DISPLAY_ATTRIBUTES]
        return ", ".join(value for value in values if value)

    @property
    def capacity_text(self) -> str:
        """Capacities in human units: "memory 80 GiB, cores 108"."""
        return ", ".join(
            f"{short_name(name, self.driver)} {capacity_amount(name, amount)}"
            for name, amount in sorted(self.capacity.items())
        )


@dataclass(frozen=True)
class NumaDevices:
    """The devices on one NUMA node (None: no NUMA attribute names one)."""

    numa_node: int | None
    devices: tuple[DRADevice, ...]

    @property
    def title(self) -> str:
        return "NUMA unknown" if self.numa_node is None else f"NUMA {self.numa_node}"

    @property
    def held(self) -> int:
        return sum(1 for device in self.devices if device.held)


def short_name(name: str, driver: str) -> str:
    """A qualified name without the driver's own domain ("gpu.nvidia.com/memory" → "memory")."""
    domain, slash, rest = name.partition("/")
    return rest if slash and domain == driver else name


def capacity_amount(name: str, amount: int) -> str:
    """Bytes for a memory capacity (GiB), a count otherwise."""
    if "memory" in name.rsplit("/", 1)[-1].lower():
        return fmt.gib(amount)
    return fmt.count(amount)


def node_dra_devices(cluster: Cluster | int, node_name: str) -> list[DRADevice]:
    """The devices ResourceSlices publish on `node_name` (newest pool generation only);
    `cluster` a Cluster or its id."""
    rows = list(
        ResourceSliceDevice.objects.filter(cluster=cluster, node_name=node_name)
        .order_by("driver", "pool", "name")
        .values(
            "driver",
            "pool",
            "name",
            "numa_node",
            "numa_attribute",
            "attributes",
            "capacity",
            generation=_GENERATION,
        )
    )
    rows = newest_generation(rows, _pool_of, itemgetter("generation"))
    holders = holders_of(cluster, {(r["driver"], r["pool"], r["name"]) for r in rows})
    return [
        DRADevice(
            driver=r["driver"],
            pool=r["pool"],
            name=r["name"],
            numa_node=r["numa_node"],
            numa_attribute=r["numa_attribute"],
            attributes=r["attributes"] or {},
            capacity=r["capacity"] or {},
            held_by=tuple(holders.get((r["driver"], r["pool"], r["name"]), ())),
        )
        for r in rows
    ]


def by_numa_node(devices: Iterable[DRADevice]) -> list[NumaDevices]:
    """Devices grouped by NUMA node, in node order, "NUMA unknown" last."""
    groups: dict[int | None, list[DRADevice]] = defaultdict(list)
    for device in devices:
        groups[device.numa_node].append(device)
    order = sorted(groups, key=lambda numa: (numa is None, numa if numa is not None else 0))
    return [NumaDevices(numa, tuple(groups[numa])) for numa in order]


def holders_of(cluster: Cluster | int, devices: set[DeviceId]) -> dict[DeviceId, list[Holder]]:
    """Which allocated claims hold each of `devices` (one query)."""
    if not devices:
        return {}
    drivers, pools, names = (set(parts) for parts in zip(*devices, strict=True))
    rows = (
        ResourceClaimDevice.objects.filter(
            cluster=cluster, driver__in=drivers, pool__in=pools, device__in=names
        )
        .order_by("claim__namespace", "claim__name", "request")
        .values(
            "driver",
            "pool",
            "device",
            "request",
            "claim__namespace",
            "claim__name",
            "claim__reserved_for",
        )
    )
    holders: dict[DeviceId, list[Holder]] = defaultdict(list)
    for row in rows:
        key = (row["driver"], row["pool"], row["device"])
        if key in devices:
            namespace = row["claim__namespace"]
            holders[key].append(
                Holder(
                    claim=f"{namespace}/{row['claim__name']}",
                    request=row["request"],
                    pods=_pods(namespace, row["claim__reserved_for"]),
                )
            )
    return holders


def nodes_with_dra_devices(cluster: Cluster) -> list[str]:
    """Names of the nodes some ResourceSlice publishes devices on."""
    return list(
        ResourceSliceDevice.objects.filter(cluster=cluster)
        .exclude(node_name="")
        .order_by("node_name")
        .values_list("node_name", flat=True)
        .distinct()
    )


def _pool_of(row: dict[str, Any]) -> tuple[str, str]:
    return row["driver"], row["pool"]


def _pods(namespace: str, consumers: Any) -> tuple[str, ...]:
    """The pods of a claim's status.reservedFor (a consumer lives in the claim's namespace)."""
    return tuple(
        f"{namespace}/{consumer.get('name', '')}"
        for consumer in consumers or ()
        if isinstance(consumer, dict) and consumer.get("resource") == "pods"
    )


def _short_value(attributes: dict[str, Any], driver: str, key: str) -> str:
    attribute = attributes.get(f"{driver}/{key}")
    if not isinstance(attribute, dict) or not attribute:
        return ""
    value = next(iter(attribute.values()))
    return ", ".join(map(str, value)) if isinstance(value, list) else str(value)
