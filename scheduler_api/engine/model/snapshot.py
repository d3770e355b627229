"""Immutable engine inputs: nodes, their NUMA zones and CPUs, pods, reservations.

All amounts are integers in base units: cpu in millicores, memory, hugepages and
storage in bytes, devices and pods as counts. Mappings are read-only by contract
(pass dicts or MappingProxyType; the engine never mutates them). The adapters in
`topology/` build these from Django models; the engine never parses Kubernetes JSON.

The scheduler reproductions read the *raw* published values (NRT topologyPolicies
and attributes, labels, annotations) and resolve policies themselves, exactly as the
schedulers do; the `tm_*` fields describe the kubelet's real configuration when known
and are there for the kubelet simulation.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from enum import StrEnum
from types import MappingProxyType
from typing import Any, TypeVar

from scheduler_api.engine.model.results import QuantityFormat

EMPTY: Mapping[str, Any] = MappingProxyType({})


T = TypeVar("T")


def _empty() -> Mapping[Any, Any]:
    return EMPTY


class Flavour(StrEnum):
    """Which NodeResourceTopology object describes the node."""

    UPSTREAM_V1ALPHA1 = "upstream-v1alpha1"
    UPSTREAM_V1ALPHA2 = "upstream-v1alpha2"
    CRANE = "crane"
    KOORDINATOR = "koordinator"


class TopologyManagerPolicy(StrEnum):
    NONE = "none"
    BEST_EFFORT = "best-effort"
    RESTRICTED = "restricted"
    SINGLE_NUMA_NODE = "single-numa-node"


class TopologyManagerScope(StrEnum):
    CONTAINER = "container"
    POD = "pod"


class QoSClass(StrEnum):
    GUARANTEED = "Guaranteed"
    BURSTABLE = "Burstable"
    BEST_EFFORT = "BestEffort"


class AllocationSource(StrEnum):
    """Who decided an existing allocation (and where it was read from)."""

    CRANE = "crane"  # pod annotation topology.crane.io/topology-result
    KOORDINATOR = "koordinator"  # pod annotation scheduling.koordinator.sh/resource-status
    KUBELET = "kubelet"  # static CPU manager state (Koordinator pod-cpu-allocs)


class ReservationPhase(StrEnum):
    PENDING = "Pending"
    AVAILABLE = "Available"
    SUCCEEDED = "Succeeded"
    WAITING = "Waiting"
    FAILED = "Failed"


class ReservationAllocatePolicy(StrEnum):
    DEFAULT = ""  # deprecated, behaves as Aligned
    ALIGNED = "Aligned"
    RESTRICTED = "Restricted"


class PreAllocationMode(StrEnum):
    """Reservation spec.preAllocationPolicy.mode (koordinator v1.8); "" when unset."""

    UNSET = ""
    DEFAULT = "Default"
    CLUSTER = "Cluster"


class CraneCPUPolicy(StrEnum):
    NONE = "none"
    EXCLUSIVE = "exclusive"
    NUMA = "numa"
    IMMOVABLE = "immovable"


class KoordQoSClass(StrEnum):
    LSE = "LSE"
    LSR = "LSR"
    LS = "LS"
    BE = "BE"
    SYSTEM = "SYSTEM"
    NONE = ""


# Membership tests read these on every node a what-if judges: built once, not per call.
CRANE_CPU_POLICIES = frozenset(CraneCPUPolicy)
KOORD_QOS_CLASSES = frozenset(KoordQoSClass)


class KoordPriorityClass(StrEnum):
    PROD = "koord-prod"
    MID = "koord-mid"
    BATCH = "koord-batch"
    FREE = "koord-free"
    NONE = ""


class CPUBindPolicy(StrEnum):
    NONE = ""
    DEFAULT = "Default"
    FULL_PCPUS = "FullPCPUs"
    SPREAD_BY_PCPUS = "SpreadByPCPUs"
    CONSTRAINED_BURST = "ConstrainedBurst"


class CPUExclusivePolicy(StrEnum):
    UNSET = ""
    NONE = "None"
    PCPU_LEVEL = "PCPULevel"
    NUMA_NODE_LEVEL = "NUMANodeLevel"


CPU_EXCLUSIVE_POLICIES = frozenset(CPUExclusivePolicy)


class NUMATopologyPolicy(StrEnum):
    """Koordinator's own NUMA policy names (label node.koordinator.sh/numa-topology-policy)."""

    NONE = ""
    BEST_EFFORT = "BestEffort"
    RESTRICTED = "Restricted"
    SINGLE_NUMA_NODE = "SingleNUMANode"


class NUMAAllocateStrategy(StrEnum):
    MOST_ALLOCATED = "MostAllocated"
    LEAST_ALLOCATED = "LeastAllocated"
    DISTRIBUTE_EVENLY = "DistributeEvenly"


LABEL_KOORD_QOS = "koordinator.sh/qosClass"
LABEL_NUMA_TOPOLOGY_POLICY = "node.koordinator.sh/numa-topology-policy"
LABEL_NUMA_ALLOCATE_STRATEGY = "node.koordinator.sh/numa-allocate-strategy"
LABEL_CPU_BIND_POLICY = "node.koordinator.sh/cpu-bind-policy"
LABEL_RESERVATION_IGNORED = "scheduling.koordinator.sh/reservation-ignored"
ANN_CRANE_CPU_POLICY = "topology.crane.io/cpu-policy"
ANN_CRANE_AWARENESS = "topology.crane.io/topology-awareness"
ANN_CRANE_RESULT = "topology.crane.io/topology-result"
# Topolens's own: who placed a pod, when not its scheduler (the agreement audit quotes it)
ANN_PLACEMENT_NOTE = "topolens.io/placement-note"
ANN_KOORD_RESOURCE_SPEC = "scheduling.koordinator.sh/resource-spec"
ANN_KOORD_RESOURCE_STATUS = "scheduling.koordinator.sh/resource-status"
ANN_KOORD_NUMA_SPEC = "scheduling.koordinator.sh/numa-topology-spec"
ANN_KOORD_RESERVATION_AFFINITY = "scheduling.koordinator.sh/reservation-affinity"
ANN_KOORD_RESERVATION_ALLOCATED = "scheduling.koordinator.sh/reservation-allocated"
# koordinator v1.8 apis/extension/reservation.go, node_reservation.go
ANN_KOORD_RESTRICTED_OPTIONS = "scheduling.koordinator.sh/reservation-restricted-options"
ANN_KOORD_EXACT_MATCH_RESERVATION = "scheduling.koordinator.sh/exact-match-reservation"
LABEL_RESERVATION_ORDER = "scheduling.koordinator.sh/reservation-order"
LABEL_ENABLE_NUMA_RESERVATION = "node.koordinator.sh/enable-numa-reservation"

GO_TRUE = frozenset({"1", "t", "T", "TRUE", "true", "True"})
GO_FALSE = frozenset({"0", "f", "F", "FALSE", "false", "False"})


def go_parse_bool(text: str) -> bool | None:
    """Go's strconv.ParseBool; None where Go would return an error."""
    if text in GO_TRUE:
        return True
    if text in GO_FALSE:
        return False
    return None


@dataclass(frozen=True, slots=True)
class ResourceAmounts:
    """One resource of one NUMA zone, as the NRT publishes it (base units)."""

    capacity: int
    allocatable: int
    available: int


@dataclass(frozen=True, slots=True)
class Zone:
    """One NRT zone, in the order the NRT lists it (scheduler-plugins depends on that order).

    `numa_id` is parsed from the name (`node-<N>`; Crane `node<N>`), -1 when it does not
    parse. `costs` maps NUMA id to distance. `zone_type` is the NRT zone type ("Node"
    for NUMA zones). Crane zones publish no `available`: set it equal to `allocatable`.
    """

    numa_id: int
    name: str
    resources: Mapping[str, ResourceAmounts]
    costs: Mapping[int, int] = field(default_factory=_empty)
    zone_type: str = "Node"


@dataclass(frozen=True, slots=True)
class PodAllocation:
    """Resources an existing pod holds on a node, per NUMA zone and per CPU.

    `numa_resources` maps NUMA id to amounts as published (Crane's topology-result is
    taken literally, including its memory quirk). `cpu_exclusive_policy` is the pod's
    Koordinator `preferredCPUExclusivePolicy`; `reservation_uid` the Koordinator
    reservation it was allocated from (annotation reservation-allocated).
    """

    namespace: str
    name: str
    uid: str
    source: AllocationSource
    cpuset: frozenset[int] = frozenset()
    numa_resources: Mapping[int, Mapping[str, int]] = field(default_factory=_empty)
    exclusive: bool = False
    cpu_exclusive_policy: CPUExclusivePolicy = CPUExclusivePolicy.UNSET
    reservation_uid: str = ""


@dataclass(frozen=True, slots=True)
class ContainerSpec:
    """A container's requests and limits after API defaulting (requests default to limits).

    `quantity_formats` records how each request was written (see
    `results.quantity_format_of`); it is only used to render annotations byte-exact.
    `restart_policy` is "Always" for sidecar init containers.
    """

    name: str
    requests: Mapping[str, int] = field(default_factory=_empty)
    limits: Mapping[str, int] = field(default_factory=_empty)
    quantity_formats: Mapping[str, QuantityFormat] = field(default_factory=_empty)
    restart_policy: str = ""


@dataclass(frozen=True, slots=True)
class OwnerRef:
    api_version: str
    kind: str
    name: str
    uid: str
    controller: bool | None = None


@dataclass(frozen=True, slots=True)
class KoordResourceSpec:
    """Annotation scheduling.koordinator.sh/resource-spec."""

    required_cpu_bind_policy: str = ""
    preferred_cpu_bind_policy: str = ""
    preferred_cpu_exclusive_policy: str = ""


def _go_string(raw: Mapping[str, Any], key: str) -> str:
    """A string field as Go's json leaves it: "" when absent or null."""
    value = raw.get(key)
    return "" if value is None else str(value)


def reservation_uid_of(annotations: Mapping[str, str]) -> str:
    """The uid a pod's reservation-allocated annotation names ("" when none or malformed)."""
    raw = _json_object(annotations.get(ANN_KOORD_RESERVATION_ALLOCATED))
    return _go_string(raw, "uid") if raw is not None else ""


def _json_object(text: str | None) -> dict[str, Any] | None:
    """A JSON object, {} when absent, None when malformed (upstream returns an error)."""
    if text is None:
        return {}
    try:
        value = json.loads(text)
    except ValueError:
        return None
    return value if isinstance(value, dict) else None


@dataclass(frozen=True, slots=True)
class PodSpec:
    """The pod being placed (or any pod), reduced to what the schedulers read.

    `priority` is spec.priority (None when unset). `api_version` stays "" as in the
    scheduler's informer objects, which drop TypeMeta (it matters for Koordinator's
    owner matching). `pod_resources` is spec.resources (PodLevelResources, beta from
    Kubernetes 1.34) after API defaulting: `{"requests": {...}, "limits": {...}}`, empty
    when the pod sets none; which rule reads it is `model.kubernetes.pod_requests`'s.
    """

    namespace: str
    name: str
    uid: str = ""
    labels: Mapping[str, str] = field(default_factory=_empty)
    annotations: Mapping[str, str] = field(default_factory=_empty)
    containers: tuple[ContainerSpec, ...] = ()
    init_containers: tuple[ContainerSpec, ...] = ()
    overhead: Mapping[str, int] = field(default_factory=_empty)
    owner_refs: tuple[OwnerRef, ...] = ()
    priority_class_name: str = ""
    priority: int | None = None
    api_version: str = ""
    pod_resources: Mapping[str, Mapping[str, int]] = field(default_factory=_empty)
    _qos: QoSClass | None = field(default=None, init=False, repr=False, compare=False)

    @property
    def qos_class(self) -> QoSClass:
        """Kubernetes GetPodQOS, worked out on first use (a what-if asks it per node)."""
        if self._qos is None:
            object.__setattr__(self, "_qos", self._pod_qos())  # frozen: set once, lazily
        assert self._qos is not None
        return self._qos

    @property
    def pod_level_requests(self) -> Mapping[str, int]:
        """spec.resources.requests (empty when unset)."""
        return self.pod_resources.get("requests", EMPTY)

    @property
    def pod_level_limits(self) -> Mapping[str, int]:
        """spec.resources.limits (empty when unset)."""
        return self.pod_resources.get("limits", EMPTY)

    def _pod_qos(self) -> QoSClass:
        """ComputePodQOS (kubernetes pkg/apis/core/v1/helper/qos/qos.go, master after
        v1.35): with pod-level resources set, the pod's own cpu and memory requests and
        limits alone decide; else the containers' (only cpu and memory count; init
        containers included).

        Upstream reads the pod level whenever spec.resources is non-nil, even with both
        maps empty (then BestEffort whatever the containers ask); an empty
        `pod_resources` here means "unset", so such a pod is judged by its containers.
        """
        if self.pod_level_requests or self.pod_level_limits:
            return self._resources_qos(self.pod_level_requests, self.pod_level_limits)
        requests: dict[str, int] = {}
        limits: dict[str, int] = {}
        guaranteed = True
        for container in self.containers + self.init_containers:
            for name, amount in container.requests.items():
                if name in ("cpu", "memory") and amount > 0:
                    requests[name] = requests.get(name, 0) + amount
            found = set()
            for name, amount in container.limits.items():
                if name in ("cpu", "memory") and amount > 0:
                    found.add(name)
                    limits[name] = limits.get(name, 0) + amount
            guaranteed = guaranteed and found == {"cpu", "memory"}
        if not requests and not limits:
            return QoSClass.BEST_EFFORT
        if guaranteed and requests == limits:
            return QoSClass.GUARANTEED
        return QoSClass.BURSTABLE

    @staticmethod
    def _resources_qos(requests: Mapping[str, int], limits: Mapping[str, int]) -> QoSClass:
        """resourceQOS of one set of requirements (qos.go): cpu and memory only. Equal
        and non-zero for both: Guaranteed; zero for both: BestEffort; else Burstable."""
        zero = set()
        for name in ("cpu", "memory"):
            request, limit = requests.get(name, 0), limits.get(name, 0)
            if request != limit:
                return QoSClass.BURSTABLE
            zero.add(request == 0)
        if len(zero) > 1:
            return QoSClass.BURSTABLE
        return QoSClass.BEST_EFFORT if zero == {True} else QoSClass.GUARANTEED

    @property
    def is_daemonset_pod(self) -> bool:
        return any(ref.kind == "DaemonSet" for ref in self.owner_refs)

    @property
    def crane_cpu_policy(self) -> str:
        """topology.crane.io/cpu-policy when it is a supported value, else ""."""
        value = self.annotations.get(ANN_CRANE_CPU_POLICY, "")
        return value if value in CRANE_CPU_POLICIES else ""

    @property
    def crane_topology_awareness(self) -> bool | None:
        """topology.crane.io/topology-awareness parsed like Go ParseBool; None if absent/bad."""
        value = self.annotations.get(ANN_CRANE_AWARENESS)
        return None if value is None else go_parse_bool(value)

    @property
    def koord_qos_class(self) -> KoordQoSClass:
        """GetPodQoSClassRaw: the koordinator.sh/qosClass label, NONE when absent or unknown."""
        value = self.labels.get(LABEL_KOORD_QOS, "")
        return KoordQoSClass(value) if value in KOORD_QOS_CLASSES else KoordQoSClass.NONE

    @property
    def koord_resource_spec(self) -> KoordResourceSpec | None:
        """The resource-spec annotation; None when it is not valid JSON."""
        raw = _json_object(self.annotations.get(ANN_KOORD_RESOURCE_SPEC))
        if raw is None:
            return None
        return KoordResourceSpec(
            required_cpu_bind_policy=_go_string(raw, "requiredCPUBindPolicy"),
            preferred_cpu_bind_policy=_go_string(raw, "preferredCPUBindPolicy"),
            preferred_cpu_exclusive_policy=_go_string(raw, "preferredCPUExclusivePolicy"),
        )

    @property
    def koord_numa_topology_spec(self) -> tuple[str, str] | None:
        """(numaTopologyPolicy, singleNUMANodeExclusive); None when not valid JSON."""
        raw = _json_object(self.annotations.get(ANN_KOORD_NUMA_SPEC))
        if raw is None:
            return None
        return _go_string(raw, "numaTopologyPolicy"), _go_string(raw, "singleNUMANodeExclusive")

    @property
    def has_reservation_affinity(self) -> bool:
        return ANN_KOORD_RESERVATION_AFFINITY in self.annotations

    @property
    def reservation_affinity_name(self) -> str:
        """The reservation the pod's reservation-affinity names ("" for none)."""
        raw = _json_object(self.annotations.get(ANN_KOORD_RESERVATION_AFFINITY))
        return _go_string(raw, "name") if raw is not None else ""

    @property
    def ignores_reservations(self) -> bool:
        return self.labels.get(LABEL_RESERVATION_IGNORED) == "true"


@dataclass(frozen=True, slots=True)
class NodeSnapshot:
    """Everything the engine knows about one node at one moment.

    NRT-derived: `flavour` (None: no NRT object), `topology_policies` (raw list),
    `nrt_attributes` (v1alpha2 top-level attributes, or Crane's attribute map), `zones`.
    Crane: `crane_cpu_manager_policy` ("None"/"Static"), `crane_topology_policy`
    ("None"/"SingleNUMANodePodLevel"). Koordinator (koordlet NRT annotations):
    `cpus` from cpu-topology, `kubelet_reserved_cpus` and `cpu_manager_policy` /
    `cpu_manager_options` from kubelet.koordinator.sh/cpu-manager-policy,
    `node_reserved_cpus` from the NRT's node.koordinator.sh/reservation (the concrete
    CPUs koordlet resolved), `system_qos_exclusive_cpus` from system-qos-resource when
    cpusetExclusive. Node object: `labels`, `annotations`, `allocatable`, `requested`
    (sum of the requests of pods already bound), and the node annotation
    node.koordinator.sh/reservation as `node_reserved_resources` /
    `node_reservation_apply_policy`. `allocations`: what existing pods hold, from
    every source. `cpus` rows are (cpu, core, socket, numa) with the core id as
    published (per-socket or global); empty when the flavour has no per-CPU detail.
    `uncore_caches` maps each CPU to its uncore (L3) cache id, empty when unknown (no
    agent publishes it today: koordlet's cpu-topology has no cache id).
    `memory_manager_policy` is the kubelet's memoryManagerPolicy (`None`/`Static`) when
    known ("": read the NRT attribute `memoryManagerPolicy`, like `tm_policy`).
    `kubelet_feature_gates` are the kubelet's feature gates when known (empty: each gate
    at its default); the CPU and Topology Manager option checks read the
    `*PolicyAlphaOptions` / `*PolicyBetaOptions` gates.
    """

    name: str
    flavour: Flavour | None = None
    labels: Mapping[str, str] = field(default_factory=_empty)
    annotations: Mapping[str, str] = field(default_factory=_empty)
    allocatable: Mapping[str, int] = field(default_factory=_empty)
    requested: Mapping[str, int] = field(default_factory=_empty)
    topology_policies: tuple[str, ...] = ()
    nrt_attributes: Mapping[str, str] = field(default_factory=_empty)
    zones: tuple[Zone, ...] = ()
    cpus: tuple[tuple[int, int, int, int], ...] = ()
    tm_policy: TopologyManagerPolicy | None = None
    tm_scope: TopologyManagerScope | None = None
    tm_max_numa_nodes: int | None = None
    tm_options: Mapping[str, str] = field(default_factory=_empty)
    cpu_manager_policy: str = ""
    cpu_manager_options: Mapping[str, str] = field(default_factory=_empty)
    uncore_caches: Mapping[int, int] = field(default_factory=_empty)
    kubelet_feature_gates: Mapping[str, bool] = field(default_factory=_empty)
    memory_manager_policy: str = ""
    kubelet_reserved_cpus: frozenset[int] = frozenset()
    node_reserved_cpus: frozenset[int] = frozenset()
    node_reservation_apply_policy: str = ""
    node_reserved_resources: Mapping[str, int] = field(default_factory=_empty)
    system_qos_exclusive_cpus: frozenset[int] = frozenset()
    allocations: tuple[PodAllocation, ...] = ()
    crane_cpu_manager_policy: str = ""
    crane_topology_policy: str = ""
    unschedulable: bool = False
    _derived: dict[str, Any] = field(default_factory=dict, init=False, repr=False, compare=False)

    def derived(self, key: str, build: Callable[[NodeSnapshot], T]) -> T:
        """`build(self)`, worked out once per node: a snapshot never changes (a changed
        node is a new snapshot), so a pure view of it can be kept with it. `key` names
        the view; each key must always come with the same `build`."""
        if key not in self._derived:
            self._derived[key] = build(self)
        return self._derived[key]  # type: ignore[no-any-return]

    @property
    def koord_numa_topology_policy_label(self) -> str:
        return self.labels.get(LABEL_NUMA_TOPOLOGY_POLICY, "")

    @property
    def numa_allocate_strategy_label(self) -> str:
        return self.labels.get(LABEL_NUMA_ALLOCATE_STRATEGY, "")

    @property
    def cpu_bind_policy_label(self) -> str:
        return self.labels.get(LABEL_CPU_BIND_POLICY, "")

    def zone(self, numa_id: int) -> Zone | None:
        return next((z for z in self.zones if z.numa_id == numa_id), None)


@dataclass(frozen=True, slots=True)
class ObjectRef:
    """A corev1.ObjectReference as used by Reservation owners and currentOwners."""

    namespace: str = ""
    name: str = ""
    uid: str = ""
    api_version: str = ""
    kind: str = ""


@dataclass(frozen=True, slots=True)
class ControllerRef:
    """Reservation owner `controller`: an OwnerReference plus an optional namespace."""

    api_version: str = ""
    kind: str = ""
    name: str = ""
    uid: str = ""
    controller: bool | None = None
    namespace: str = ""


@dataclass(frozen=True, slots=True)
class LabelRequirement:
    key: str
    operator: str  # In, NotIn, Exists, DoesNotExist
    values: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class LabelSelector:
    match_labels: Mapping[str, str] = field(default_factory=_empty)
    match_expressions: tuple[LabelRequirement, ...] = ()


@dataclass(frozen=True, slots=True)
class ReservationOwner:
    """One entry of spec.owners; the set fields are ANDed, owners are ORed."""

    object: ObjectRef | None = None
    controller: ControllerRef | None = None
    label_selector: LabelSelector | None = None


@dataclass(frozen=True, slots=True)
class ReservationSnapshot:
    """A Koordinator Reservation (formats.md §3.1).

    `allocatable` / `allocated` are status values (base units). `cpuset` and
    `numa_resources` come from the reservation's own resource-status annotation (what
    koord-scheduler reserved for it). `current_owners` are status.currentOwners.
    `labels` are metadata.labels (reservation-order); `restricted_options` is the raw
    reservation-restricted-options annotation (None when absent: upstream parses it,
    and a malformed one makes the reservation unmatchable). `pre_allocation`,
    `pre_allocation_mode` and `pre_allocation_multiple` are spec.preAllocation and
    spec.preAllocationPolicy{mode, enableMultiple}: they matter only when the
    reservation itself is scheduled, which the engine does not do.
    """

    name: str
    uid: str
    node_name: str = ""
    phase: ReservationPhase = ReservationPhase.PENDING
    owners: tuple[ReservationOwner, ...] = ()
    allocatable: Mapping[str, int] = field(default_factory=_empty)
    allocated: Mapping[str, int] = field(default_factory=_empty)
    allocate_once: bool = True
    allocate_policy: ReservationAllocatePolicy = ReservationAllocatePolicy.DEFAULT
    unschedulable: bool = False
    cpuset: frozenset[int] = frozenset()
    numa_resources: Mapping[int, Mapping[str, int]] = field(default_factory=_empty)
    current_owners: tuple[ObjectRef, ...] = ()
    labels: Mapping[str, str] = field(default_factory=_empty)
    restricted_options: str | None = None
    pre_allocation: bool = False
    pre_allocation_mode: PreAllocationMode = PreAllocationMode.UNSET
    pre_allocation_multiple: bool = False


@dataclass(frozen=True, slots=True, weakref_slot=True)
class ClusterSnapshot:
    """All nodes and reservations at one moment.

    `taken_at` is when the snapshot was read; `data_as_of` is when its data was last
    known equal to the cluster (None when unknown, e.g. a kubectl dump), so a what-if
    can say how old its answer's data is.
    """

    nodes: tuple[NodeSnapshot, ...] = ()
    reservations: tuple[ReservationSnapshot, ...] = ()
    taken_at: datetime | None = None
    data_as_of: datetime | None = None

    @property
    def data_age_seconds(self) -> float | None:
        if self.taken_at is None or self.data_as_of is None:
            return None
        return max(0.0, (self.taken_at - self.data_as_of).total_seconds())

    def node(self, name: str) -> NodeSnapshot | None:
        """The node called `name`, or None (linear; clusters here have hundreds of nodes)."""
        return next((n for n in self.nodes if n.name == name), None)

    def reservations_on(self, node_name: str) -> tuple[ReservationSnapshot, ...]:
        return tuple(r for r in self.reservations if r.node_name == node_name)
