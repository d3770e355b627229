"""Hardware shapes of the demo fleet and their Linux-like CPU numbering.

Numbering follows what the kernel shows on x86 servers with SMT: logical CPUs
0..N/T-1 are the first thread of each core, the next N/T their siblings, and so on;
cores are numbered globally, sockets own contiguous ranges of cores, and each NUMA
zone (SNC / NPS sub-socket domains included) owns a contiguous range of cores.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

from .quantity import GIB, KIB

# Firmware and kernel keep a slice of every zone; zone 0 also holds the kernel image.
_ZONE_OVERHEAD_PER_MILLE = 15
_ZONE0_EXTRA_KIB = 358_400


class Vendor(StrEnum):
    INTEL = "GenuineIntel"
    AMD = "AuthenticAMD"


@dataclass(frozen=True)
class CpuInfo:
    id: int
    core: int
    socket: int
    node: int


@dataclass(frozen=True)
class HardwareShape:
    family: str
    instance_type: str
    cpu_model: str
    vendor: Vendor
    sockets: int
    cores_per_socket: int
    threads_per_core: int
    zones_per_socket: int
    zone_memory_gib: int
    cat_l3_cbm_mask: str
    kube_reserved_cpus: int
    same_socket_distance: int = 12
    remote_distance: int = 21
    gpus_per_zone: int = 0
    gpu_product: str = ""

    @property
    def cores(self) -> int:
        return self.sockets * self.cores_per_socket

    @property
    def logical_cpus(self) -> int:
        return self.cores * self.threads_per_core

    @property
    def zone_count(self) -> int:
        return self.sockets * self.zones_per_socket

    @property
    def cores_per_zone(self) -> int:
        return self.cores_per_socket // self.zones_per_socket

    @property
    def cpus_per_zone(self) -> int:
        return self.cores_per_zone * self.threads_per_core

    @property
    def gpus(self) -> int:
        return self.gpus_per_zone * self.zone_count

    def cpu(self, cpu_id: int) -> CpuInfo:
        core = cpu_id % self.cores
        return CpuInfo(
            id=cpu_id,
            core=core,
            socket=core // self.cores_per_socket,
            node=core // self.cores_per_zone,
        )

    def cpus(self) -> list[CpuInfo]:
        return [self.cpu(cpu_id) for cpu_id in range(self.logical_cpus)]

    def core_threads(self, core: int) -> list[int]:
        return [core + thread * self.cores for thread in range(self.threads_per_core)]

    def zone_cores(self, zone: int) -> range:
        return range(zone * self.cores_per_zone, (zone + 1) * self.cores_per_zone)

    def zone_cpus(self, zone: int) -> list[int]:
        return sorted(cpu for core in self.zone_cores(zone) for cpu in self.core_threads(core))

    def zone_socket(self, zone: int) -> int:
        return zone // self.zones_per_socket

    def distance(self, zone_a: int, zone_b: int) -> int:
        if zone_a == zone_b:
            return 10
        if self.zone_socket(zone_a) == self.zone_socket(zone_b):
            return self.same_socket_distance
        return self.remote_distance

    def zone_memory_bytes(self, zone: int) -> int:
        """Usable memory of one zone, a whole number of KiB as /proc/meminfo reports it."""
        nominal_kib = self.zone_memory_gib * GIB // KIB
        usable_kib = nominal_kib - round(nominal_kib * _ZONE_OVERHEAD_PER_MILLE / 1000)
        if zone == 0:
            usable_kib -= _ZONE0_EXTRA_KIB
        return usable_kib * KIB

    def memory_bytes(self) -> int:
        return sum(self.zone_memory_bytes(zone) for zone in range(self.zone_count))


INTEL_2S = HardwareShape(
    family="intel-2s",
    instance_type="bm.intel.gold6348.2s",
    cpu_model="Intel(R) Xeon(R) Gold 6348 CPU @ 2.60GHz",
    vendor=Vendor.INTEL,
    sockets=2,
    cores_per_socket=28,
    threads_per_core=2,
    zones_per_socket=1,
    zone_memory_gib=256,
    cat_l3_cbm_mask="fff",
    kube_reserved_cpus=4,
)
EPYC_NPS4 = HardwareShape(
    family="epyc-nps4",
    instance_type="bm.amd.epyc9654.2s.nps4",
    cpu_model="AMD EPYC 9654 96-Core Processor",
    vendor=Vendor.AMD,
    sockets=2,
    cores_per_socket=96,
    threads_per_core=2,
    zones_per_socket=4,
    zone_memory_gib=192,
    cat_l3_cbm_mask="ffff",
    kube_reserved_cpus=4,
    remote_distance=32,
)
SMALL_32 = HardwareShape(
    family="small",
    instance_type="bm.intel.silver4314.1s",
    cpu_model="Intel(R) Xeon(R) Silver 4314 CPU @ 2.40GHz",
    vendor=Vendor.INTEL,
    sockets=1,
    cores_per_socket=16,
    threads_per_core=2,
    zones_per_socket=1,
    zone_memory_gib=128,
    cat_l3_cbm_mask="3ff",
    kube_reserved_cpus=2,
)
SMALL_16 = HardwareShape(
    family="small",
    instance_type="bm.intel.silver4309y.1s",
    cpu_model="Intel(R) Xeon(R) Silver 4309Y CPU @ 2.80GHz",
    vendor=Vendor.INTEL,
    sockets=1,
    cores_per_socket=8,
    threads_per_core=2,
    zones_per_socket=1,
    zone_memory_gib=64,
    cat_l3_cbm_mask="fff",
    kube_reserved_cpus=2,
)
GPU_H100 = HardwareShape(
    family="gpu",
    instance_type="bm.gpu.h100x8",
    cpu_model="Intel(R) Xeon(R) Platinum 8462Y+",
    vendor=Vendor.INTEL,
    sockets=2,
    cores_per_socket=32,
    threads_per_core=2,
    zones_per_socket=2,  # sub-NUMA clustering (SNC2): two zones per socket
    zone_memory_gib=256,
    cat_l3_cbm_mask="7fff",
    kube_reserved_cpus=4,
    gpus_per_zone=2,
    gpu_product="NVIDIA-H100-80GB-HBM3",
)

# Each family names its nodes "<family>-<nn>"; a family with several SKUs alternates them.
FAMILIES: dict[str, tuple[HardwareShape, ...]] = {
    "intel-2s": (INTEL_2S,),
    "epyc-nps4": (EPYC_NPS4,),
    "small": (SMALL_32, SMALL_16),
    "gpu": (GPU_H100,),
}
# Share of the fleet beyond the first node of each family.
FAMILY_WEIGHTS: dict[str, float] = {"intel-2s": 0.35, "epyc-nps4": 0.2, "small": 0.3, "gpu": 0.15}
