"""The Topolens allocation engine: pure Python, no Django.

It reproduces what the real placement components decide (kubelet Topology Manager and
static CPU manager, scheduler-plugins NodeResourceTopologyMatch, crane-scheduler and
koord-scheduler) from immutable snapshot values. The families and where each rule lives:
`scheduler_api/engine/README.md`.

This module is the engine's front door: the names below are its public contract, and the
rest of Topolens (`topology`, `scheduler_api.api`, services and selectors) imports only
these (`tests/engine/test_architecture.py` holds it to that).
"""

from __future__ import annotations

from scheduler_api.engine.koordinator.reference.reservation import (
    match_selector,
)
from scheduler_api.engine.koordinator.reference.state import (
    nrt_numa_policy,
)
from scheduler_api.engine.kubelet.reference.cpu_topology import (
    CPUTopology,
)
from scheduler_api.engine.kubelet.reference.cpumanager import (
    StaticPolicyOptions,
    reserve_cpus,
    take_cpus,
)
from scheduler_api.engine.kubelet.reference.explain import (
    AdmissionExplanation,
    ProviderHints,
    explain_admission,
)
from scheduler_api.engine.kubelet.reference.node_config import (
    KubeletCPUPools,
    kubelet_cpu_pools,
    kubelet_rules,
)
from scheduler_api.engine.kubelet.reference.topologymanager import (
    TopologyHint,
    merge_hints,
)
from scheduler_api.engine.model import snapshot
from scheduler_api.engine.model.errors import (
    AllocationError,
)
from scheduler_api.engine.model.kubernetes import pod_level_resources_set, pod_request
from scheduler_api.engine.model.results import (
    Reason,
    ReasonCheck,
    format_cpuset,
    human_amount,
    quantity_format_of,
    reason_text,
)
from scheduler_api.engine.model.snapshot import (
    ANN_CRANE_AWARENESS,
    ANN_CRANE_CPU_POLICY,
    ANN_KOORD_RESOURCE_SPEC,
    LABEL_CPU_BIND_POLICY,
    LABEL_KOORD_QOS,
    LABEL_NUMA_ALLOCATE_STRATEGY,
    LABEL_NUMA_TOPOLOGY_POLICY,
    AllocationSource,
    ClusterSnapshot,
    ContainerSpec,
    ControllerRef,
    CPUBindPolicy,
    CPUExclusivePolicy,
    CraneCPUPolicy,
    Flavour,
    KoordQoSClass,
    LabelRequirement,
    LabelSelector,
    NodeSnapshot,
    NUMAAllocateStrategy,
    NUMATopologyPolicy,
    ObjectRef,
    OwnerRef,
    PodAllocation,
    PodSpec,
    PreAllocationMode,
    QoSClass,
    ReservationAllocatePolicy,
    ReservationOwner,
    ReservationPhase,
    ReservationSnapshot,
    ResourceAmounts,
    TopologyManagerPolicy,
    TopologyManagerScope,
    Zone,
    go_parse_bool,
    reservation_uid_of,
)
from scheduler_api.engine.schedulerplugins.reference.match import (
    ScoringStrategy,
    resolve_topology_manager,
)
from scheduler_api.engine.whatif.admission import (
    Admission,
)
from scheduler_api.engine.whatif.capacity import (
    RESERVED_KINDS,
    NodeCapacity,
    ZoneCPUs,
    cluster_fragmentation,
    fragmentation,
    node_capacity,
    zone_cpus,
)
from scheduler_api.engine.whatif.evaluate import (
    NodeVerdict,
    Scheduler,
    SharedVerdicts,
    WhatIfResult,
    evaluate,
    place,
    prepare,
)
from scheduler_api.engine.whatif.profiles import (
    DEFAULT_SCHEDULER_NAME,
    Judge,
    ProfileError,
    SchedulerProfile,
    parse_scheduler_configuration,
    resolve_judge,
)
from scheduler_api.engine.whatif.systems import pod_level_note, system_for

__all__ = [
    "ANN_CRANE_AWARENESS",
    "ANN_CRANE_CPU_POLICY",
    "ANN_KOORD_RESOURCE_SPEC",
    "Admission",
    "AdmissionExplanation",
    "AllocationError",
    "AllocationSource",
    "CPUBindPolicy",
    "CPUExclusivePolicy",
    "CPUTopology",
    "ClusterSnapshot",
    "ContainerSpec",
    "ControllerRef",
    "CraneCPUPolicy",
    "DEFAULT_SCHEDULER_NAME",
    "Flavour",
    "Judge",
    "KoordQoSClass",
    "LABEL_CPU_BIND_POLICY",
    "LABEL_KOORD_QOS",
    "LABEL_NUMA_ALLOCATE_STRATEGY",
    "LABEL_NUMA_TOPOLOGY_POLICY",
    "LabelRequirement",
    "LabelSelector",
    "NUMAAllocateStrategy",
    "NUMATopologyPolicy",
    "NodeCapacity",
    "RESERVED_KINDS",
    "ZoneCPUs",
    "cluster_fragmentation",
    "fragmentation",
    "zone_cpus",
    "NodeSnapshot",
    "NodeVerdict",
    "ObjectRef",
    "OwnerRef",
    "PodAllocation",
    "PodSpec",
    "ProfileError",
    "QoSClass",
    "PreAllocationMode",
    "ReservationAllocatePolicy",
    "ReservationOwner",
    "ReservationPhase",
    "ReservationSnapshot",
    "ResourceAmounts",
    "Scheduler",
    "SchedulerProfile",
    "ScoringStrategy",
    "SharedVerdicts",
    "StaticPolicyOptions",
    "TopologyHint",
    "ProviderHints",
    "explain_admission",
    "TopologyManagerPolicy",
    "TopologyManagerScope",
    "WhatIfResult",
    "Zone",
    "evaluate",
    "format_cpuset",
    "go_parse_bool",
    "match_selector",
    "merge_hints",
    "node_capacity",
    "nrt_numa_policy",
    "parse_scheduler_configuration",
    "place",
    "pod_level_note",
    "system_for",
    "pod_level_resources_set",
    "pod_request",
    "prepare",
    "quantity_format_of",
    "reason_text",
    "Reason",
    "ReasonCheck",
    "human_amount",
    "reservation_uid_of",
    "reserve_cpus",
    "resolve_judge",
    "resolve_topology_manager",
    "snapshot",
    "take_cpus",
    "KubeletCPUPools",
    "kubelet_cpu_pools",
    "kubelet_rules",
]
