"""The read shapes the dashboard selectors return and the figure builders take.

Plain frozen dataclasses with no model imports, so that figure builders can be
tested without a database. Amounts are in base units (millicores, bytes, counts).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import datetime

DEVICE_PREFIX_EXCLUDED = ("kubernetes.io/",)  # koordinator's batch-* are not devices


def is_device(resource: str) -> bool:
    """Extended resources such as nvidia.com/gpu; Koordinator's batch resources are not."""
    return "/" in resource and not resource.startswith(DEVICE_PREFIX_EXCLUDED)


def is_hugepages(resource: str) -> bool:
    return resource.startswith("hugepages-")


@dataclass(frozen=True)
class Amounts:
    """One resource of one zone as the NRT publishes it; `available` None: not published."""

    capacity: int
    allocatable: int
    available: int | None

    @property
    def reserved(self) -> int:
        return max(self.capacity - self.allocatable, 0)

    @property
    def used(self) -> int | None:
        return None if self.available is None else max(self.allocatable - self.available, 0)


@dataclass(frozen=True)
class ZoneCell:
    """One NUMA zone of one node; `free_exclusive_cpus` None: figures not computed yet."""

    numa_id: int
    name: str
    resources: Mapping[str, Amounts]
    free_exclusive_cpus: int | None = None

    @property
    def cpu(self) -> Amounts | None:
        return self.resources.get("cpu")

    @property
    def free_share(self) -> float | None:
        """Free exclusive CPUs over allocatable CPUs: the heatmap's colour."""
        cpu = self.cpu
        if self.free_exclusive_cpus is None or cpu is None or cpu.allocatable <= 0:
            return None
        return min(self.free_exclusive_cpus * 1000 / cpu.allocatable, 1.0)

    def devices(self) -> dict[str, Amounts]:
        return {k: v for k, v in self.resources.items() if is_device(k)}

    def hugepages(self) -> dict[str, Amounts]:
        return {k: v for k, v in self.resources.items() if is_hugepages(k) and v.capacity}


@dataclass(frozen=True)
class FiguresView:
    """A NodeFigures row, read; its absence means "not computed yet", never zero."""

    computed_at: datetime
    free_cpus_total: int
    max_free_cpus_in_one_zone: int
    largest_exclusive_pod_own_policy: int
    largest_exclusive_pod: Mapping[str, int] = field(default_factory=dict)
    free_cpus_by_zone: Mapping[int, int] = field(default_factory=dict)


@dataclass(frozen=True)
class NodeRow:
    """One node of the overview: its badges and its NUMA zones."""

    name: str
    flavour: str = ""
    policy: str = ""
    scope: str = ""
    unschedulable: bool = False
    nrt_changed_at: datetime | None = None
    zones: tuple[ZoneCell, ...] = ()
    figures: FiguresView | None = None


@dataclass(frozen=True)
class PolicyFree:
    policy: str
    nodes: int
    computed: int
    free_cpus: int


@dataclass(frozen=True)
class Bucket:
    label: str
    nodes: int
    computed: bool = True


@dataclass(frozen=True)
class OverviewSummary:
    """Over every node matching the filters, not only the page shown."""

    nodes: int
    zones: int
    computed: int
    free_by_policy: tuple[PolicyFree, ...]
    largest_pod: int | None
    largest_pod_node: str | None
    distribution: tuple[Bucket, ...]

    @property
    def not_computed(self) -> int:
        return self.nodes - self.computed


@dataclass(frozen=True)
class DataAge:
    """When the mirror was last known equal to the cluster, and how we know."""

    as_of: datetime | None
    source: str


SYNC_SOURCE = "live sync (stalest collection)"
IMPORT_SOURCE = "last import"
NEVER_SOURCE = "never imported"


def stalest_data_age(
    synced_through: Iterable[datetime | None], last_imported_at: datetime | None
) -> DataAge:
    """The one rule for how old a cluster's data is, from its served collections' times.

    The stalest collection, not the freshest: an answer is only as current as its
    oldest input. A collection the sync has not listed yet still holds what the last
    import wrote, so it counts as of that import; with neither, the age is unknown.
    """
    times = list(synced_through)
    if not any(moment is not None for moment in times):
        if last_imported_at is None:
            return DataAge(None, NEVER_SOURCE)
        return DataAge(last_imported_at, IMPORT_SOURCE)
    filled = [last_imported_at if moment is None else moment for moment in times]
    if any(moment is None for moment in filled):
        return DataAge(None, "live sync (a collection not listed yet)")
    return DataAge(min(m for m in filled if m is not None), SYNC_SOURCE)
