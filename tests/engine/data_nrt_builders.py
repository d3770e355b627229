"""Small builders that turn upstream-test-shaped data into engine snapshots.

Quantities are written as Kubernetes strings ("2", "500m", "8Gi") so ported tables
read like their Go originals; `amount` converts them to engine base units.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from decimal import Decimal

from scheduler_api.engine.model.results import quantity_format_of
from scheduler_api.engine.model.snapshot import (
    ContainerSpec,
    Flavour,
    NodeSnapshot,
    PodSpec,
    ResourceAmounts,
    Zone,
)

SUFFIXES: dict[str, Decimal | int] = {
    "Ki": 2**10, "Mi": 2**20, "Gi": 2**30, "Ti": 2**40, "Pi": 2**50, "Ei": 2**60,
    "n": Decimal("1e-9"), "u": Decimal("1e-6"), "m": Decimal("1e-3"), "": 1,
    "k": 10**3, "M": 10**6, "G": 10**9, "T": 10**12, "P": 10**15, "E": 10**18,
}  # fmt: skip


def amount(resource: str, text: str) -> int:
    """A quantity string in engine base units (cpu in millicores, rounding up)."""
    text = text.strip()
    number = text.rstrip("KMGTPEinumk")
    value = Decimal(number) * SUFFIXES[text[len(number) :]]
    if resource == "cpu":
        value *= 1000
    return int(value.to_integral_value(rounding="ROUND_CEILING"))


def amounts(resources: Mapping[str, str]) -> dict[str, int]:
    return {name: amount(name, text) for name, text in resources.items()}


def container(
    name: str, requests: Mapping[str, str], limits: Mapping[str, str] | None = None
) -> ContainerSpec:
    """A container; formats are recorded so annotation rendering can be checked."""
    return ContainerSpec(
        name=name,
        requests=amounts(requests),
        limits=amounts(requests if limits is None else limits),
        quantity_formats={k: quantity_format_of(v) for k, v in requests.items()},
    )


def requests_only(name: str, requests: Mapping[str, str]) -> ContainerSpec:
    return ContainerSpec(name=name, requests=amounts(requests))


def pod(
    *containers: ContainerSpec,
    init: Sequence[ContainerSpec] = (),
    name: str = "testpod",
    namespace: str = "default",
    **extra: object,
) -> PodSpec:
    return PodSpec(
        namespace=namespace,
        name=name,
        containers=tuple(containers),
        init_containers=tuple(init),
        **extra,  # type: ignore[arg-type]
    )


def guaranteed(resources: Mapping[str, str], count: int = 1) -> PodSpec:
    """makePodByResourceList(WithManyContainers): requests == limits."""
    return pod(*(container(f"cnt-{i + 1}", resources) for i in range(count)))


def nrt_zone(
    numa_id: int,
    resources: Mapping[str, tuple[str, str]],
    costs: Mapping[int, int] | None = None,
    name: str | None = None,
) -> Zone:
    """MakeTopologyResInfo(name, capacity, available) for each resource of one zone."""
    published = {
        res: ResourceAmounts(amount(res, cap), amount(res, cap), amount(res, avail))
        for res, (cap, avail) in resources.items()
    }
    return Zone(numa_id, name or f"node-{numa_id}", published, dict(costs or {}))


def nrt_node(
    name: str,
    zones: Sequence[Zone],
    *,
    policies: Sequence[str] = (),
    attributes: Mapping[str, str] | None = None,
    extra_allocatable: Mapping[str, str] | None = None,
    flavour: Flavour | None = Flavour.UPSTREAM_V1ALPHA2,
) -> NodeSnapshot:
    """A node whose allocatable is the sum of the zones' available (makeResourceListFromZones)."""
    allocatable: dict[str, int] = {}
    for zone in zones:
        for res, published in zone.resources.items():
            allocatable[res] = allocatable.get(res, 0) + published.available
    allocatable.update(amounts(extra_allocatable or {}))
    return NodeSnapshot(
        name=name,
        flavour=flavour,
        allocatable=allocatable,
        topology_policies=tuple(policies),
        nrt_attributes=dict(attributes or {}),
        zones=tuple(zones),
    )
