"""The mirror of each cluster (observed state) and what admins want (desired state).

Observed rows are written only by the import/sync services; admin shows them
read-only. Amounts are exact integers in base units (millicores, bytes, counts).
One module per topic; every model is importable from `topology.models`.
"""

from topology.models.agreement import (
    AgreementSample,
    AgreementVerdict,
    PodAgreement,
    PredictionStatus,
    TrackedPrediction,
)
from topology.models.desired import ApplyRecord, NodePolicy, QoSDraft, ReferencePod
from topology.models.diagnosis import Finding, PodDiagnosis, PodEvent
from topology.models.dra import (
    ResourceClaim,
    ResourceClaimDevice,
    ResourceSlice,
    ResourceSliceDevice,
)
from topology.models.history import ClusterFigureSample, NodeFigureSample
from topology.models.mirror import (
    Cluster,
    CPUTuple,
    Node,
    NodeCPUReservation,
    NodeFigures,
    NodeTopology,
    ObservedModel,
    Pod,
    PodAllocation,
    QoSConfig,
    QoSStrategy,
    ResctrlSetting,
    Reservation,
    Zone,
    ZoneResource,
    decode_cpus,
    encode_cpus,
)
from topology.models.scheduling import SchedulerConfiguration
from topology.models.sync import ClusterConnection, SyncError, SyncLease, SyncState

__all__ = [
    "AgreementSample",
    "AgreementVerdict",
    "ApplyRecord",
    "CPUTuple",
    "Cluster",
    "ClusterFigureSample",
    "Finding",
    "ClusterConnection",
    "Node",
    "NodeCPUReservation",
    "NodeFigureSample",
    "NodeFigures",
    "NodePolicy",
    "PodAgreement",
    "PredictionStatus",
    "TrackedPrediction",
    "NodeTopology",
    "ObservedModel",
    "Pod",
    "PodAllocation",
    "PodDiagnosis",
    "PodEvent",
    "QoSConfig",
    "QoSDraft",
    "QoSStrategy",
    "ReferencePod",
    "Reservation",
    "ResctrlSetting",
    "ResourceClaim",
    "ResourceClaimDevice",
    "ResourceSlice",
    "ResourceSliceDevice",
    "SchedulerConfiguration",
    "SyncError",
    "SyncLease",
    "SyncState",
    "Zone",
    "ZoneResource",
    "decode_cpus",
    "encode_cpus",
]
