"""The mirror of each cluster: observed state, written only by the import/sync services.

Admin shows these rows read-only. Amounts are exact integers in base units (millicores,
bytes, counts).
"""

from __future__ import annotations

from array import array

from django.db import models

from topology.choices import (
    AllocationSource,
    CPUTopologySource,
    Flavour,
    QOSClass,
    ResctrlClass,
    ReservationApplyPolicy,
    ReservationPhase,
    TopologyManagerPolicy,
    TopologyManagerScope,
)
from topology.models.row_hash import RowHash

CPUTuple = tuple[int, int, int, int]


class Cluster(models.Model):
    name = models.SlugField(max_length=100, unique=True)
    description = models.CharField(max_length=200, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    last_imported_at = models.DateTimeField(null=True, blank=True)
    mirror_version = models.PositiveBigIntegerField(
        default=0, help_text="bumped by every write to the mirror; keys caches built from it"
    )
    diagnosis_queued_at = models.DateTimeField(
        null=True,
        blank=True,
        editable=False,
        help_text="a diagnosis refresh is queued (coalesces requests)",
    )
    diagnosed_version = models.PositiveBigIntegerField(
        null=True,
        blank=True,
        editable=False,
        help_text="the mirror version the stored diagnoses were made from",
    )
    diagnosed_at = models.DateTimeField(null=True, blank=True, editable=False)
    # How old the mirror was at the last refresh, and whether past the freshness
    # threshold: every stored diagnosis of the cluster was confirmed by that refresh.
    diagnosed_data_age_seconds = models.FloatField(null=True, blank=True, editable=False)
    diagnosed_stale = models.BooleanField(default=False, editable=False)
    problem_count = models.PositiveIntegerField(
        default=0,
        editable=False,
        help_text="diagnosed pods plus warning and error findings (the header badge)",
    )

    class Meta:
        ordering = ["name"]

    def __str__(self) -> str:
        return self.name


class ObservedModel(models.Model):
    """Fields every mirrored Kubernetes object carries."""

    uid = models.CharField(max_length=64, blank=True)
    resource_version = models.CharField(max_length=64, blank=True)
    observed_at = models.DateTimeField()
    content_hash = models.CharField(
        max_length=64, blank=True, help_text="hash of the parsed object: unchanged means no write"
    )

    class Meta:
        abstract = True


class Node(ObservedModel):
    cluster = models.ForeignKey(Cluster, on_delete=models.CASCADE, related_name="nodes")
    name = models.CharField(max_length=253)
    labels = models.JSONField(default=dict, blank=True)
    annotations = models.JSONField(default=dict, blank=True, help_text="Only those Topolens reads.")
    capacity = models.JSONField(default=dict, blank=True)
    allocatable = models.JSONField(default=dict, blank=True)
    unschedulable = models.BooleanField(default=False)

    class Meta:
        ordering = ["cluster", "name"]
        constraints = [models.UniqueConstraint(fields=["cluster", "name"], name="node_unique_name")]

    def __str__(self) -> str:
        return f"{self.cluster.name}/{self.name}"


def encode_cpus(cpus: list[CPUTuple] | tuple[CPUTuple, ...]) -> bytes:
    """Pack (cpu, core, socket, numa) rows as little-endian uint16: 8 bytes a CPU."""
    packed = array("H", [value for cpu in cpus for value in cpu])
    if packed.itemsize != 2:  # pragma: no cover - every CPython platform has 2-byte H
        raise RuntimeError("unsigned short is not 2 bytes on this platform")
    return packed.tobytes()


def decode_cpus(blob: bytes | memoryview | None) -> tuple[CPUTuple, ...]:
    if not blob:
        return ()
    values = array("H")
    values.frombytes(bytes(blob))
    return tuple(
        (values[i], values[i + 1], values[i + 2], values[i + 3]) for i in range(0, len(values), 4)
    )


class NodeTopology(ObservedModel):
    """One NodeResourceTopology, whatever its flavour, resolved the way its consumers read it."""

    node = models.OneToOneField(Node, on_delete=models.CASCADE, related_name="topology")
    flavour = models.CharField(max_length=32, choices=Flavour.choices)
    api_version = models.CharField(max_length=64)
    tm_policy = models.CharField(
        "Topology Manager policy", max_length=32, choices=TopologyManagerPolicy.choices
    )
    tm_scope = models.CharField(
        "Topology Manager scope", max_length=16, choices=TopologyManagerScope.choices
    )
    tm_max_numa_nodes = models.PositiveIntegerField(default=8)
    tm_options = models.JSONField(default=dict, blank=True)
    topology_policies = models.JSONField(default=list, blank=True)
    attributes = models.JSONField(default=dict, blank=True)
    cpu_manager_policy = models.CharField(max_length=32, blank=True)
    cpu_manager_options = models.JSONField(default=dict, blank=True)
    kubelet_reserved_cpus = models.TextField(blank=True, help_text="cpulist")
    pods_fingerprint = models.CharField(
        max_length=128,
        blank=True,
        help_text="the attribute nodeTopologyPodsFingerprint, else the legacy annotation "
        "topology.node.k8s.io/fingerprint",
    )
    pods_fingerprint_method = models.CharField(
        max_length=64, blank=True, help_text="nodeTopologyPodsFingerprintMethod (blank: all)"
    )
    crane_cpu_manager_policy = models.CharField(max_length=32, blank=True)
    crane_topology_policy = models.CharField(max_length=64, blank=True)
    crane_reserved = models.JSONField(default=dict, blank=True)
    koordlet = models.JSONField(
        default=dict, blank=True, help_text="koordlet's other annotations, parsed."
    )
    cpu_topology_source = models.CharField(
        max_length=16, choices=CPUTopologySource.choices, blank=True
    )
    cpu_count = models.PositiveIntegerField(default=0)
    cpu_table = models.BinaryField(
        default=b"", blank=True, help_text="(cpu, core, socket, numa) rows packed as uint16."
    )
    raw = models.JSONField(default=dict)

    class Meta:
        verbose_name = "node topology"
        verbose_name_plural = "node topologies"

    def __str__(self) -> str:
        return f"{self.node} ({self.flavour})"

    @property
    def cpus(self) -> tuple[CPUTuple, ...]:
        return decode_cpus(self.cpu_table)


class Zone(models.Model):
    topology = models.ForeignKey(NodeTopology, on_delete=models.CASCADE, related_name="zones")
    name = models.CharField(max_length=64)
    zone_type = models.CharField(max_length=32)
    numa_id = models.PositiveIntegerField(null=True, blank=True)
    parent = models.CharField(max_length=64, blank=True)
    costs = models.JSONField(default=dict, blank=True, help_text="zone name → distance")
    attributes = models.JSONField(default=dict, blank=True)
    reserved_cpus = models.PositiveIntegerField(null=True, blank=True, help_text="Crane only")

    class Meta:
        ordering = ["topology", "numa_id", "name"]
        constraints = [
            models.UniqueConstraint(fields=["topology", "name"], name="zone_unique_name")
        ]

    def __str__(self) -> str:
        return self.name


class ZoneResource(models.Model):
    zone = models.ForeignKey(Zone, on_delete=models.CASCADE, related_name="resources")
    name = models.CharField(max_length=253)
    capacity = models.BigIntegerField()
    allocatable = models.BigIntegerField()
    available = models.BigIntegerField(null=True, blank=True, help_text="null: not published")

    class Meta:
        ordering = ["zone", "name"]
        constraints = [
            models.UniqueConstraint(fields=["zone", "name"], name="zone_resource_unique_name")
        ]

    def __str__(self) -> str:
        return f"{self.zone}/{self.name}"


class NodeCPUReservation(models.Model):
    """`node.koordinator.sh/reservation` on the Node (and, resolved, on koordlet's NRT)."""

    node = models.OneToOneField(Node, on_delete=models.CASCADE, related_name="cpu_reservation")
    resources = models.JSONField(default=dict, blank=True)
    reserved_cpus = models.TextField(blank=True, help_text="cpulist, as annotated")
    apply_policy = models.CharField(
        max_length=32, choices=ReservationApplyPolicy.choices, blank=True
    )
    resolved_cpus = models.TextField(blank=True, help_text="cpulist koordlet resolved")
    raw = models.TextField(blank=True)

    def __str__(self) -> str:
        return f"{self.node}: {self.reserved_cpus or self.resources}"


class Pod(ObservedModel):
    cluster = models.ForeignKey(Cluster, on_delete=models.CASCADE, related_name="pods")
    node = models.ForeignKey(
        Node, on_delete=models.SET_NULL, null=True, blank=True, related_name="pods"
    )
    node_name = models.CharField(max_length=253, blank=True)
    namespace = models.CharField(max_length=253)
    name = models.CharField(max_length=253)
    phase = models.CharField(max_length=32, blank=True)
    qos_class = models.CharField(max_length=16, choices=QOSClass.choices)
    scheduler_name = models.CharField(max_length=253, blank=True)
    priority = models.IntegerField(null=True, blank=True)
    labels = models.JSONField(default=dict, blank=True)
    annotations = models.JSONField(default=dict, blank=True, help_text="Only those Topolens reads.")
    owner_references = models.JSONField(default=list, blank=True)
    containers = models.JSONField(default=list, help_text="[{name, requests, limits}]")
    init_containers = models.JSONField(default=list, blank=True)
    overhead = models.JSONField(default=dict, blank=True)
    created_at = models.DateTimeField(null=True, blank=True, help_text="metadata.creationTimestamp")
    status = models.JSONField(
        default=dict,
        blank=True,
        help_text="what explains a placement: reason, message, the PodScheduled condition, "
        "containers' waiting/termination reasons (topology.parsers.pod.status_of)",
    )
    resources = models.JSONField(
        default=dict,
        blank=True,
        help_text="spec.resources (pod-level requests and limits, defaulted): "
        "{requests, limits}; {} when the pod sets none",
    )
    row_hash = models.GeneratedField(
        expression=RowHash("namespace", "name", "content_hash"),
        output_field=models.BigIntegerField(),
        db_persist=True,
        help_text="kept by the database, for the node fingerprints",
    )

    class Meta:
        ordering = ["cluster", "namespace", "name"]
        constraints = [
            models.UniqueConstraint(fields=["cluster", "namespace", "name"], name="pod_unique_name")
        ]
        # The sync links pods to their node, and NRTs to the pods they pin, by node name.
        # The fingerprints read the row hashes from it too.
        indexes = [
            models.Index(
                fields=["cluster", "node_name"], include=["row_hash"], name="pod_node_name_idx"
            )
        ]

    def __str__(self) -> str:
        return f"{self.namespace}/{self.name}"


class PodAllocation(models.Model):
    """CPUs / NUMA resources a pod holds on its node, per publishing system.

    kubelet-pinned allocations come from koordlet's NRT annotation and may name
    a pod the mirror lacks, hence the namespace/name copy and a nullable pod;
    likewise a pod may name a node not mirrored yet. Both links are made when
    the missing object arrives.
    """

    cluster = models.ForeignKey(Cluster, on_delete=models.CASCADE, related_name="allocations")
    node = models.ForeignKey(
        Node, on_delete=models.SET_NULL, null=True, blank=True, related_name="allocations"
    )
    node_name = models.CharField(max_length=253)
    pod = models.ForeignKey(
        Pod, on_delete=models.SET_NULL, null=True, blank=True, related_name="allocations"
    )
    namespace = models.CharField(max_length=253)
    pod_name = models.CharField(max_length=253)
    pod_uid = models.CharField(max_length=64, blank=True)
    source = models.CharField(max_length=16, choices=AllocationSource.choices)
    cpuset = models.TextField(blank=True, help_text="cpulist; empty when not published")
    numa_resources = models.JSONField(default=dict, blank=True, help_text="numa id → resources")
    raw = models.TextField(blank=True)
    row_hash = models.GeneratedField(
        expression=RowHash(
            "namespace", "pod_name", "pod_uid", "source", "cpuset", json_columns=("numa_resources",)
        ),
        output_field=models.BigIntegerField(),
        db_persist=True,
        help_text="kept by the database, for the node fingerprints",
    )

    class Meta:
        ordering = ["cluster", "node_name", "namespace", "pod_name", "source"]
        constraints = [
            models.UniqueConstraint(
                fields=["cluster", "namespace", "pod_name", "source"], name="allocation_unique"
            )
        ]
        # An NRT's kubelet-pinned allocations are replaced by node name.
        indexes = [
            models.Index(
                fields=["cluster", "node_name"],
                include=["row_hash"],
                name="allocation_node_name_idx",
            )
        ]

    def __str__(self) -> str:
        return f"{self.namespace}/{self.pod_name} ({self.source}) {self.cpuset}"


class Reservation(ObservedModel):
    """A Koordinator `Reservation` object."""

    cluster = models.ForeignKey(Cluster, on_delete=models.CASCADE, related_name="reservations")
    name = models.CharField(max_length=253)
    node = models.ForeignKey(
        Node, on_delete=models.SET_NULL, null=True, blank=True, related_name="reservations"
    )
    node_name = models.CharField(max_length=253, blank=True)
    template_namespace = models.CharField(max_length=253, blank=True)
    template_labels = models.JSONField(default=dict, blank=True)
    containers = models.JSONField(default=list, blank=True)
    owners = models.JSONField(default=list)
    ttl_seconds = models.PositiveIntegerField(null=True, blank=True, help_text="null: never")
    expires = models.DateTimeField(null=True, blank=True)
    allocate_once = models.BooleanField(default=True)
    allocate_policy = models.CharField(max_length=32, blank=True)
    unschedulable = models.BooleanField(default=False)
    pre_allocation = models.BooleanField(default=False)
    phase = models.CharField(max_length=16, choices=ReservationPhase.choices)
    allocatable = models.JSONField(default=dict, blank=True)
    allocated = models.JSONField(default=dict, blank=True)
    current_owners = models.JSONField(default=list, blank=True)
    cpuset = models.TextField(blank=True)
    numa_resources = models.JSONField(default=dict, blank=True)
    raw = models.JSONField(default=dict)

    class Meta:
        ordering = ["cluster", "name"]
        constraints = [
            models.UniqueConstraint(fields=["cluster", "name"], name="reservation_unique_name")
        ]

    def __str__(self) -> str:
        return self.name


class QoSConfig(ObservedModel):
    """The `slo-controller-config` ConfigMap.

    `data` keeps every other key verbatim; `resource-qos-config` lives in the
    strategies below it and is rendered back from them.
    """

    cluster = models.OneToOneField(Cluster, on_delete=models.CASCADE, related_name="qos_config")
    namespace = models.CharField(max_length=253)
    name = models.CharField(max_length=253)
    data = models.JSONField(default=dict, help_text="other ConfigMap data keys, verbatim")

    class Meta:
        verbose_name = "QoS config"

    def __str__(self) -> str:
        return f"{self.cluster.name}: {self.namespace}/{self.name}"


class QoSStrategy(models.Model):
    config = models.ForeignKey(QoSConfig, on_delete=models.CASCADE, related_name="strategies")
    position = models.PositiveIntegerField(help_text="0 is the cluster strategy")
    name = models.CharField(max_length=253, blank=True)
    node_selector = models.JSONField(null=True, blank=True)
    body = models.JSONField(default=dict, help_text="the strategy verbatim, minus resctrlQOS")

    class Meta:
        ordering = ["config", "position"]
        verbose_name_plural = "QoS strategies"
        constraints = [
            models.UniqueConstraint(fields=["config", "position"], name="strategy_unique_position")
        ]

    def __str__(self) -> str:
        return self.name or "cluster strategy"

    @property
    def is_cluster_strategy(self) -> bool:
        return self.position == 0


class ResctrlSetting(models.Model):
    strategy = models.ForeignKey(QoSStrategy, on_delete=models.CASCADE, related_name="resctrl")
    qos_class = models.CharField(max_length=16, choices=ResctrlClass.choices)
    enable = models.BooleanField(null=True, blank=True)
    cat_range_start_percent = models.IntegerField(null=True, blank=True)
    cat_range_end_percent = models.IntegerField(null=True, blank=True)
    mba_percent = models.IntegerField(null=True, blank=True)
    extra = models.JSONField(default=dict, blank=True, help_text="keys Topolens doesn't model")

    class Meta:
        ordering = ["strategy", "qos_class"]
        constraints = [
            models.UniqueConstraint(fields=["strategy", "qos_class"], name="resctrl_unique_class")
        ]

    def __str__(self) -> str:
        return f"{self.strategy} {self.get_qos_class_display()}"


class NodeFigures(models.Model):
    """Derived per-node capacity, recomputed periodically from the mirror by the engine.

    Stored so that the dashboard and the API can filter 5,000 nodes by "a zone with
    at least N free exclusive CPUs" in one indexed query.
    """

    node = models.OneToOneField(
        Node, on_delete=models.CASCADE, primary_key=True, related_name="figures"
    )
    computed_at = models.DateTimeField()
    free_cpus_by_zone = models.JSONField(
        default=dict, help_text="free exclusive CPUs per NUMA id (keys are strings)"
    )
    free_cpus_total = models.PositiveIntegerField(default=0)
    max_free_cpus_in_one_zone = models.PositiveIntegerField(default=0, db_index=True)
    largest_exclusive_pod = models.JSONField(
        default=dict, help_text="largest exclusive pod (CPUs) admitted, per Topology Manager policy"
    )
    largest_exclusive_pod_own_policy = models.PositiveIntegerField(
        default=0, help_text="the same under the node's own policy"
    )
    zone_cpus = models.JSONField(
        default=dict,
        help_text="per NUMA id (string keys): {capacity, free, exclusive, shared, reserved: "
        "{kubelet, node, system-qos, reservation}}; whole CPUs; exclusive, shared and "
        "reserved null without per-CPU detail (engine.zone_cpus)",
    )
    fragmentation = models.FloatField(
        default=0.0, help_text="1 - largest zone's free CPUs / all free CPUs (engine.fragmentation)"
    )
    zone_resources = models.JSONField(
        default=dict,
        help_text="per NUMA id (string keys): resource -> [capacity, allocatable, available] "
        "in base units as the NRT publishes them (available null: not published)",
    )

    class Meta:
        verbose_name_plural = "node figures"

    def __str__(self) -> str:
        return f"figures of {self.node}"
