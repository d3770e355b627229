"""The uncore-cache node's CPUs as the DRA CPU driver publishes them, cache ids included.

kubernetes-sigs/dra-driver-cpu in its individual mode (pkg/device/builder.go
`cpuDeviceInfos`, `createCPUDeviceSlices`; pkg/device/attributes.go; pkg/driver/driver.go):
one device per logical CPU, named `cpudev<NNN>` core by core (a CPU, then its sibling;
cores in the order of their first CPU), with the standard resource.kubernetes.io/numaNode,
`dra.cpu/socketID`, `smtEnabled`, `cacheL3ID`, `coreType`, `coreID`, `cpuID`, and the
compatibility NUMA attributes `dra.net/numaNode` and `dra.cpu/numaNodeID`. The devices are
cut into slices of at most 128 (resource.k8s.io/v1 ResourceSliceMaxDevices), one pool
named after the node.

The hardware is an AMD EPYC 9654 (Zen 4): each CCD of 8 cores shares one L3, so a CPU's
cache id is its core's CCD, core // 8 (cores are numbered machine-wide and each NPS4 zone
owns 24 of them: three uncore caches per NUMA zone). `coreID` is the CPU table's
machine-wide core id (Linux's own core_id counts within a package).

Two simplifications. The driver runs without `--reserved-cpus`, so every CPU is a device:
Topolens reads the cache ids only when they name exactly the CPUs of the node's table
(`topology.parsers.resource_slice.uncore_caches_for`). And upstream says the driver and
the kubelet's CPU Manager do not run together on a node (its README): here both do,
because the driver is the one publisher of the uncore cache ids Topolens reads, and the
demo shows what the kubelet's static policy does with them.

No draw from the demo's random generators is made here.
"""

from __future__ import annotations

from typing import Any

from .dra import demo_uid, slice_object
from .hardware import CpuInfo, HardwareShape
from .plan import NodePlan

DRIVER = "dra.cpu"
CORES_PER_UNCORE_CACHE = 8
SLICE_MAX_DEVICES = 128
STANDARD_NUMA_NODE = "resource.kubernetes.io/numaNode"
_RESOURCE_VERSION = "4099001"  # published when the node came up, before the workloads


def uncore_cache_of(cpu: CpuInfo) -> int:
    return cpu.core // CORES_PER_UNCORE_CACHE


def cpu_slices(cluster: str, plan: NodePlan) -> list[dict[str, Any]]:
    """The node's ResourceSlices, devices in the driver's order, 128 to a slice."""
    devices = [
        _device(ordinal, cpu, plan.shape) for ordinal, cpu in enumerate(_driver_order(plan.shape))
    ]
    chunks = [
        devices[start : start + SLICE_MAX_DEVICES]
        for start in range(0, len(devices), SLICE_MAX_DEVICES)
    ]
    return [
        _slice(cluster, plan, ordinal, chunk, len(chunks)) for ordinal, chunk in enumerate(chunks)
    ]


def _driver_order(shape: HardwareShape) -> list[CpuInfo]:
    """Each core's CPUs together, cores by their lowest CPU id (`cpuDeviceInfos`)."""
    cores = sorted(
        (sorted(shape.core_threads(core)) for core in range(shape.cores)), key=lambda cpus: cpus[0]
    )
    return [shape.cpu(cpu) for cpus in cores for cpu in cpus]


def _device(ordinal: int, cpu: CpuInfo, shape: HardwareShape) -> dict[str, Any]:
    return {
        "name": f"cpudev{ordinal:03d}",
        "attributes": {
            STANDARD_NUMA_NODE: {"int": cpu.node},
            "dra.cpu/socketID": {"int": cpu.socket},
            "dra.cpu/smtEnabled": {"bool": shape.threads_per_core > 1},
            "dra.cpu/cacheL3ID": {"int": uncore_cache_of(cpu)},
            "dra.cpu/coreType": {"string": "standard"},
            "dra.cpu/coreID": {"int": cpu.core},
            "dra.cpu/cpuID": {"int": cpu.id},
            "dra.net/numaNode": {"int": cpu.node},
            "dra.cpu/numaNodeID": {"int": cpu.node},
        },
    }


def _slice(
    cluster: str, plan: NodePlan, ordinal: int, devices: list[dict[str, Any]], count: int
) -> dict[str, Any]:
    suffix = demo_uid("", "suffix", f"{plan.name}/{DRIVER}/{ordinal}")[:5]
    name = f"{plan.name}-{DRIVER}-{suffix}"
    return slice_object(
        cluster, plan, DRIVER, name, devices, resource_version=_RESOURCE_VERSION, slice_count=count
    )
