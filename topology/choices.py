"""Enumerations shared by models, parsers and views: value, label (and colour) in one place.

Where the engine has the same enumeration, its value is the one source and
these add the labels Django shows. A label written as `Label(text, colour)`
carries the colour that badges and charts reuse (`Choice.X.colour`); the
palette is Okabe-Ito based so that it stays readable with colour-blindness, and
every place that shows a colour also shows text, so colour is never the only signal.
"""

from __future__ import annotations

from django.db import models

from scheduler_api.engine import snapshot as engine

NEUTRAL = "#8a94a3"


class Label(str):
    """A choice label that also carries its colour and a short mark (a letter or two).

    It is a `str`, so Django, forms and migrations see a plain label.
    """

    colour: str
    mark: str

    def __new__(cls, text: str, colour: str = NEUTRAL, mark: str = "") -> Label:
        label = super().__new__(cls, text)
        label.colour = colour
        label.mark = mark
        return label

    def __reduce__(self) -> tuple[type[Label], tuple[str, str, str]]:
        return (Label, (str(self), self.colour, self.mark))


class ColouredChoices(models.TextChoices):
    """TextChoices whose labels are `Label`s: `.colour` and `.mark` per member."""

    @property
    def colour(self) -> str:
        return getattr(self.label, "colour", NEUTRAL)

    @property
    def mark(self) -> str:
        return getattr(self.label, "mark", "")

    @classmethod
    def colour_of(cls, value: str) -> str:
        """The colour of a stored value; neutral for a value the set does not know."""
        return cls(value).colour if value in cls.values else NEUTRAL


class Flavour(ColouredChoices):
    UPSTREAM_V1ALPHA1 = (
        engine.Flavour.UPSTREAM_V1ALPHA1.value,
        Label("NRT topology.node.k8s.io/v1alpha1", "#56b4e9", "U1"),
    )
    UPSTREAM_V1ALPHA2 = (
        engine.Flavour.UPSTREAM_V1ALPHA2.value,
        Label("NRT topology.node.k8s.io/v1alpha2", "#0072b2", "U2"),
    )
    CRANE = engine.Flavour.CRANE.value, Label("Crane topology.crane.io/v1alpha1", "#e69f00", "C")
    KOORDINATOR = (
        engine.Flavour.KOORDINATOR.value,
        Label("Koordinator (NRT v1alpha1 + koordlet)", "#009e73", "K"),
    )


class TopologyManagerPolicy(ColouredChoices):
    NONE = engine.TopologyManagerPolicy.NONE.value, Label("none", "#9aa3ad")
    BEST_EFFORT = engine.TopologyManagerPolicy.BEST_EFFORT.value, Label("best-effort", "#56b4e9")
    RESTRICTED = engine.TopologyManagerPolicy.RESTRICTED.value, Label("restricted", "#cc79a7")
    SINGLE_NUMA_NODE = (
        engine.TopologyManagerPolicy.SINGLE_NUMA_NODE.value,
        Label("single-numa-node", "#d55e00"),
    )


class TopologyManagerScope(ColouredChoices):
    CONTAINER = engine.TopologyManagerScope.CONTAINER.value, Label("container", "#c9ced6")
    POD = engine.TopologyManagerScope.POD.value, Label("pod", "#7f8a99")


class QOSClass(ColouredChoices):
    GUARANTEED = engine.QoSClass.GUARANTEED.value, Label("Guaranteed", "#0072b2")
    BURSTABLE = engine.QoSClass.BURSTABLE.value, Label("Burstable", "#56b4e9")
    BEST_EFFORT = engine.QoSClass.BEST_EFFORT.value, Label("BestEffort", "#c9ced6")


class AllocationSource(ColouredChoices):
    CRANE = engine.AllocationSource.CRANE.value, Label("Crane topology-result", "#e69f00")
    KOORDINATOR = (
        engine.AllocationSource.KOORDINATOR.value,
        Label("Koordinator resource-status", "#009e73"),
    )
    KUBELET = (
        engine.AllocationSource.KUBELET.value,
        Label("kubelet static (koordlet pod-cpu-allocs)", "#0072b2"),
    )


class ReservationPhase(ColouredChoices):
    PENDING = engine.ReservationPhase.PENDING.value, Label("Pending", "#f0e442")
    AVAILABLE = engine.ReservationPhase.AVAILABLE.value, Label("Available", "#009e73")
    SUCCEEDED = engine.ReservationPhase.SUCCEEDED.value, Label("Succeeded", "#9aa3ad")
    WAITING = engine.ReservationPhase.WAITING.value, Label("Waiting", "#56b4e9")
    FAILED = engine.ReservationPhase.FAILED.value, Label("Failed", "#d55e00")


class ReservationApplyPolicy(models.TextChoices):
    DEFAULT = "Default", "Default"
    RESERVED_CPUS_ONLY = "ReservedCPUsOnly", "ReservedCPUsOnly"


class KoordNUMATopologyPolicy(models.TextChoices):
    NONE = engine.NUMATopologyPolicy.NONE.value, "None"
    BEST_EFFORT = engine.NUMATopologyPolicy.BEST_EFFORT.value, "BestEffort"
    RESTRICTED = engine.NUMATopologyPolicy.RESTRICTED.value, "Restricted"
    SINGLE_NUMA_NODE = engine.NUMATopologyPolicy.SINGLE_NUMA_NODE.value, "SingleNUMANode"


class NUMAAllocateStrategy(models.TextChoices):
    MOST_ALLOCATED = engine.NUMAAllocateStrategy.MOST_ALLOCATED.value, "MostAllocated"
    LEAST_ALLOCATED = engine.NUMAAllocateStrategy.LEAST_ALLOCATED.value, "LeastAllocated"
    DISTRIBUTE_EVENLY = engine.NUMAAllocateStrategy.DISTRIBUTE_EVENLY.value, "DistributeEvenly"


class NodeCPUBindPolicy(models.TextChoices):
    NONE = "None", "None"
    FULL_PCPUS_ONLY = "FullPCPUsOnly", "FullPCPUsOnly"
    SPREAD_BY_PCPUS = "SpreadByPCPUs", "SpreadByPCPUs"


class ResctrlClass(ColouredChoices):
    LSR = "lsrClass", Label("LSR", "#0072b2")
    LS = "lsClass", Label("LS", "#009e73")
    BE = "beClass", Label("BE", "#e69f00")
    SYSTEM = "systemClass", Label("system", "#9aa3ad")


class CPUTopologySource(models.TextChoices):
    NONE = "", "not published"
    KOORDINATOR = "koordinator", "koordlet cpu-topology annotation"


class ConnectionMode(models.TextChoices):
    """How Topolens authenticates to a cluster's API server."""

    KUBECONFIG = "kubeconfig", "kubeconfig file (path + optional context)"
    IN_CLUSTER = "in-cluster", "in-cluster service account"


class SyncResource(models.TextChoices):
    """Each API collection the sync lists and watches; one sync state per cluster and value.

    The two NodeResourceTopology groups are separate collections (different CRDs) that
    both feed the NodeTopology mirror, so each has its own state and reconciliation.
    """

    NODES = "nodes", "Nodes"
    NRT_UPSTREAM = (
        "noderesourcetopologies.topology.node.k8s.io",
        "NodeResourceTopologies (topology.node.k8s.io)",
    )
    NRT_CRANE = (
        "noderesourcetopologies.topology.crane.io",
        "NodeResourceTopologies (topology.crane.io)",
    )
    PODS = "pods", "Pods"
    RESERVATIONS = "reservations.scheduling.koordinator.sh", "Koordinator Reservations"
    QOS_CONFIG = (
        "configmaps/slo-controller-config",
        "ConfigMap koordinator-system/slo-controller-config",
    )
    SCHEDULER_CONFIG = (
        "configmaps/scheduler-config",
        "ConfigMap of the scheduler configuration (named in the cluster's connection)",
    )
    EVENTS = "events", "Warning events about pods (placement failures)"
    RESOURCE_SLICES = "resourceslices.resource.k8s.io", "DRA ResourceSlices (resource.k8s.io)"
    RESOURCE_CLAIMS = "resourceclaims.resource.k8s.io", "DRA ResourceClaims (resource.k8s.io)"


class CPUState(ColouredChoices):
    """What holds one logical CPU, as the dashboard and the API show it.

    One vocabulary everywhere (README, "What the CPU words mean"): a CPU is **held
    exclusively** by a pod, **reserved** (kubelet or node annotation), or **free for an
    exclusive pod**; of the free ones, some are **in the shared pool** (unpinned pods'
    requests use them until an exclusive pod takes them) and some are **held by a
    Reservation** (free for its owners only). The overview's and the API's "free for an
    exclusive pod" counts free + shared + reservation. The NRT's own `available` is a
    different, published figure, always labelled "NRT available".

    The mark is drawn in the cell and repeated in the legend; an exclusive CPU
    shows its pod's own code (A, B, …) and colour instead of the ones here.
    """

    EXCLUSIVE = "exclusive", Label("held exclusively by a pod", "#0072b2", "P")
    SHARED = (
        "shared",
        Label(
            "free for an exclusive pod, in the shared pool (unpinned pods use it)", "#b9cfe4", "s"
        ),
    )
    RESERVED = "reserved", Label("reserved (kubelet or node annotation)", "#4b5563", "x")
    RESERVATION = (
        "reservation",
        Label("free for an exclusive pod, held by a Reservation (for its owners)", "#f2c14e", "r"),
    )
    FREE = "free", Label("free for an exclusive pod, unused", "#f5f7fa", "")


class WriteKind(models.TextChoices):
    """What a write-back changes in a cluster; one audit row per apply."""

    NODE_POLICY = "node-policy", "node labels and annotations"
    QOS_CONFIG = "qos-config", "slo-controller-config ConfigMap"
    RESERVATION = "reservation", "Koordinator Reservation"


class ApplyStatus(ColouredChoices):
    PENDING = "pending", Label("pending", "#56b4e9", "…")
    APPLIED = "applied", Label("applied", "#009e73", "✓")
    CONFLICT = "conflict", Label("conflict", "#e69f00", "!")
    ERROR = "error", Label("error", "#d55e00", "✗")


class DiagnosisState(models.TextChoices):
    """Why a pod is diagnosed: not bound yet, or bound and refused by the kubelet."""

    PENDING = "pending", "Pending"
    REJECTED = "rejected", "Rejected at admission"


class Severity(ColouredChoices):
    INFO = "info", Label("info", "#56b4e9", "i")
    WARNING = "warning", Label("warning", "#e69f00", "!")
    ERROR = "error", Label("error", "#d55e00", "×")


class FindingKind(models.TextChoices):
    """The data-truth checks (README, "Findings"): each names what is wrong, not a fix."""

    FINGERPRINT_OFF_SYNC = "fingerprint-off-sync", "NRT pod fingerprint off sync"
    STALE_NRT = "stale-nrt", "NRT not updated while its pods changed"
    ACCOUNTING_MISMATCH = "accounting-mismatch", "Exclusive CPUs published ≠ allocations known"
    MISSING_NRT = "missing-nrt", "Node without an NRT"
    ORPHAN_NRT = "orphan-nrt", "NRT without a node"
    MISSING_CPU_TOPOLOGY = "missing-cpu-topology", "Koordinator node without cpu-topology"
    FILTER_ADMITS_ALL = "filter-admits-all", "NRT filter admits every pod on this node"
    POOL_CONFIG_DRIFT = "pool-config-drift", "Node pool with differing kubelet settings"
    POD_ON_RESERVED_CPUS = "pod-on-reserved-cpus", "Pod pinned to reserved CPUs"
