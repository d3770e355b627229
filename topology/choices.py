"""Enumerations shared by models, parsers and views: value, label (and colour) in one place."""

from __future__ import annotations

from django.db import models


class Flavour(models.TextChoices):
    UPSTREAM_V1ALPHA1 = "upstream-v1alpha1", "NRT topology.node.k8s.io/v1alpha1"
    UPSTREAM_V1ALPHA2 = "upstream-v1alpha2", "NRT topology.node.k8s.io/v1alpha2"
    CRANE = "crane", "Crane topology.crane.io/v1alpha1"
    KOORDINATOR = "koordinator", "Koordinator (NRT v1alpha1 + koordlet)"


class TopologyManagerPolicy(models.TextChoices):
    NONE = "none", "none"
    BEST_EFFORT = "best-effort", "best-effort"
    RESTRICTED = "restricted", "restricted"
    SINGLE_NUMA_NODE = "single-numa-node", "single-numa-node"


class TopologyManagerScope(models.TextChoices):
    CONTAINER = "container", "container"
    POD = "pod", "pod"


class QOSClass(models.TextChoices):
    GUARANTEED = "Guaranteed", "Guaranteed"
    BURSTABLE = "Burstable", "Burstable"
    BEST_EFFORT = "BestEffort", "BestEffort"


class AllocationSource(models.TextChoices):
    CRANE = "crane", "Crane topology-result"
    KOORDINATOR = "koordinator", "Koordinator resource-status"
    KUBELET = "kubelet", "kubelet static (koordlet pod-cpu-allocs)"


class ReservationPhase(models.TextChoices):
    PENDING = "Pending", "Pending"
    AVAILABLE = "Available", "Available"
    SUCCEEDED = "Succeeded", "Succeeded"
    WAITING = "Waiting", "Waiting"
    FAILED = "Failed", "Failed"


class ReservationApplyPolicy(models.TextChoices):
    DEFAULT = "Default", "Default"
    RESERVED_CPUS_ONLY = "ReservedCPUsOnly", "ReservedCPUsOnly"


class KoordNUMATopologyPolicy(models.TextChoices):
    NONE = "", "None"
    BEST_EFFORT = "BestEffort", "BestEffort"
    RESTRICTED = "Restricted", "Restricted"
    SINGLE_NUMA_NODE = "SingleNUMANode", "SingleNUMANode"


class NUMAAllocateStrategy(models.TextChoices):
    MOST_ALLOCATED = "MostAllocated", "MostAllocated"
    LEAST_ALLOCATED = "LeastAllocated", "LeastAllocated"
    DISTRIBUTE_EVENLY = "DistributeEvenly", "DistributeEvenly"


class NodeCPUBindPolicy(models.TextChoices):
    NONE = "None", "None"
    FULL_PCPUS_ONLY = "FullPCPUsOnly", "FullPCPUsOnly"
    SPREAD_BY_PCPUS = "SpreadByPCPUs", "SpreadByPCPUs"


class ResctrlClass(models.TextChoices):
    LSR = "lsrClass", "LSR"
    LS = "lsClass", "LS"
    BE = "beClass", "BE"
    SYSTEM = "systemClass", "system"


class CPUTopologySource(models.TextChoices):
    NONE = "", "not published"
    KOORDINATOR = "koordinator", "koordlet cpu-topology annotation"
