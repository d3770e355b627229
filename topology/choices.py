"""Enumerations shared by models, parsers and views: value, label (and colour) in one place.

Where the engine has the same enumeration, its value is the one source and
these add the labels Django shows.
"""

from __future__ import annotations

from django.db import models

from scheduler_api.engine import snapshot as engine


class Flavour(models.TextChoices):
    UPSTREAM_V1ALPHA1 = engine.Flavour.UPSTREAM_V1ALPHA1.value, "NRT topology.node.k8s.io/v1alpha1"
    UPSTREAM_V1ALPHA2 = engine.Flavour.UPSTREAM_V1ALPHA2.value, "NRT topology.node.k8s.io/v1alpha2"
    CRANE = engine.Flavour.CRANE.value, "Crane topology.crane.io/v1alpha1"
    KOORDINATOR = engine.Flavour.KOORDINATOR.value, "Koordinator (NRT v1alpha1 + koordlet)"


class TopologyManagerPolicy(models.TextChoices):
    NONE = engine.TopologyManagerPolicy.NONE.value, "none"
    BEST_EFFORT = engine.TopologyManagerPolicy.BEST_EFFORT.value, "best-effort"
    RESTRICTED = engine.TopologyManagerPolicy.RESTRICTED.value, "restricted"
    SINGLE_NUMA_NODE = engine.TopologyManagerPolicy.SINGLE_NUMA_NODE.value, "single-numa-node"


class TopologyManagerScope(models.TextChoices):
    CONTAINER = engine.TopologyManagerScope.CONTAINER.value, "container"
    POD = engine.TopologyManagerScope.POD.value, "pod"


class QOSClass(models.TextChoices):
    GUARANTEED = engine.QoSClass.GUARANTEED.value, "Guaranteed"
    BURSTABLE = engine.QoSClass.BURSTABLE.value, "Burstable"
    BEST_EFFORT = engine.QoSClass.BEST_EFFORT.value, "BestEffort"


class AllocationSource(models.TextChoices):
    CRANE = engine.AllocationSource.CRANE.value, "Crane topology-result"
    KOORDINATOR = engine.AllocationSource.KOORDINATOR.value, "Koordinator resource-status"
    KUBELET = engine.AllocationSource.KUBELET.value, "kubelet static (koordlet pod-cpu-allocs)"


class ReservationPhase(models.TextChoices):
    PENDING = engine.ReservationPhase.PENDING.value, "Pending"
    AVAILABLE = engine.ReservationPhase.AVAILABLE.value, "Available"
    SUCCEEDED = engine.ReservationPhase.SUCCEEDED.value, "Succeeded"
    WAITING = engine.ReservationPhase.WAITING.value, "Waiting"
    FAILED = engine.ReservationPhase.FAILED.value, "Failed"


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


class ResctrlClass(models.TextChoices):
    LSR = "lsrClass", "LSR"
    LS = "lsClass", "LS"
    BE = "beClass", "BE"
    SYSTEM = "systemClass", "system"


class CPUTopologySource(models.TextChoices):
    NONE = "", "not published"
    KOORDINATOR = "koordinator", "koordlet cpu-topology annotation"
