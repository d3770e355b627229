"""The collections Topolens mirrors, as the API server names them."""

from __future__ import annotations

from dataclasses import dataclass, replace

from topology.choices import SyncResource
from topology.parsers import MirroredKind
from topology.parsers.resource_slice import API_GROUP as DRA_API_GROUP
from topology.parsers.resource_slice import READABLE_VERSIONS as DRA_READABLE_VERSIONS

QOS_NAMESPACE = "koordinator-system"
QOS_CONFIGMAP = "slo-controller-config"
# Succeeded pods hold nothing; the server leaves them out, and watchers see them leave
# as DELETED events. Failed pods are listed: one the kubelet rejected at admission is
# mirrored for its diagnosis (`parsers.pod.PodRecord.rejected`); the others are dropped
# as they are parsed (`finished`), and one that fails later leaves as a MODIFIED event.
ACTIVE_PODS = "status.phase!=Succeeded"
# Both are event field selectors the API server supports; the reasons are filtered by
# the parser (`parsers.event`), since a field selector cannot OR values.
POD_WARNINGS = "involvedObject.kind=Pod,type=Warning"


@dataclass(frozen=True)
class Resource:
    """One collection to list and watch, at one group/version."""

    sync: SyncResource
    kind: MirroredKind
    object_kind: str
    group: str
    plural: str
    version: str = ""
    namespace: str = ""
    field_selector: str = ""
    readable_versions: tuple[str, ...] = ()

    @property
    def api_version(self) -> str:
        return f"{self.group}/{self.version}" if self.group else self.version

    @property
    def scope_group(self) -> str:
        """API group whose mirrored rows this collection owns (NRTs share one table)."""
        return self.group if self.kind is MirroredKind.TOPOLOGY else ""

    def at(self, version: str) -> Resource:
        return replace(self, version=version)


NODES = Resource(SyncResource.NODES, MirroredKind.NODE, "Node", "", "nodes", "v1")
PODS = Resource(
    SyncResource.PODS, MirroredKind.POD, "Pod", "", "pods", "v1", field_selector=ACTIVE_PODS
)
EVENTS = Resource(
    SyncResource.EVENTS,
    MirroredKind.EVENT,
    "Event",
    "",
    "events",
    "v1",
    field_selector=POD_WARNINGS,
)
QOS_CONFIG = Resource(
    SyncResource.QOS_CONFIG,
    MirroredKind.QOS_CONFIG,
    "ConfigMap",
    "",
    "configmaps",
    "v1",
    namespace=QOS_NAMESPACE,
    field_selector=f"metadata.name={QOS_CONFIGMAP}",
)


def scheduler_config_resource(reference: str) -> Resource:
    """The one ConfigMap (`namespace/name`) a cluster's connection names as its scheduler
    configuration: listed and watched by name, as the slo-controller-config is."""
    namespace, _, name = reference.partition("/")
    return Resource(
        SyncResource.SCHEDULER_CONFIG,
        MirroredKind.SCHEDULER_CONFIG,
        "ConfigMap",
        "",
        "configmaps",
        "v1",
        namespace=namespace,
        field_selector=f"metadata.name={name}",
    )


# Versions are discovered; these are the ones the parsers can read.
NRT_UPSTREAM = Resource(
    SyncResource.NRT_UPSTREAM,
    MirroredKind.TOPOLOGY,
    "NodeResourceTopology",
    "topology.node.k8s.io",
    "noderesourcetopologies",
    readable_versions=("v1alpha2", "v1alpha1"),
)
NRT_CRANE = Resource(
    SyncResource.NRT_CRANE,
    MirroredKind.TOPOLOGY,
    "NodeResourceTopology",
    "topology.crane.io",
    "noderesourcetopologies",
    readable_versions=("v1alpha1",),
)
RESERVATIONS = Resource(
    SyncResource.RESERVATIONS,
    MirroredKind.RESERVATION,
    "Reservation",
    "scheduling.koordinator.sh",
    "reservations",
    readable_versions=("v1alpha1",),
)
# DRA (built into Kubernetes, GA in 1.34): optional like the CRDs above; a cluster that
# does not serve resource.k8s.io (or not at a version the parser reads) skips them.
RESOURCE_SLICES = Resource(
    SyncResource.RESOURCE_SLICES,
    MirroredKind.RESOURCE_SLICE,
    "ResourceSlice",
    DRA_API_GROUP,
    "resourceslices",
    readable_versions=DRA_READABLE_VERSIONS,
)
RESOURCE_CLAIMS = Resource(
    SyncResource.RESOURCE_CLAIMS,
    MirroredKind.RESOURCE_CLAIM,
    "ResourceClaim",
    DRA_API_GROUP,
    "resourceclaims",
    readable_versions=DRA_READABLE_VERSIONS,
)
CORE_RESOURCES = (NODES, PODS, EVENTS, QOS_CONFIG)
GROUP_RESOURCES = (NRT_UPSTREAM, NRT_CRANE, RESERVATIONS, RESOURCE_SLICES, RESOURCE_CLAIMS)
# Nodes first: NRTs need their Node, pods and reservations link to it. Events follow
# their pods (a pod's events are read beside it, never before it).
SYNC_ORDER = (
    SyncResource.NODES,
    SyncResource.NRT_UPSTREAM,
    SyncResource.NRT_CRANE,
    SyncResource.PODS,
    SyncResource.EVENTS,
    SyncResource.RESERVATIONS,
    SyncResource.QOS_CONFIG,
    SyncResource.SCHEDULER_CONFIG,
    SyncResource.RESOURCE_SLICES,
    SyncResource.RESOURCE_CLAIMS,
)


def in_sync_order(resources: list[Resource]) -> list[Resource]:
    return sorted(resources, key=lambda r: SYNC_ORDER.index(r.sync))
