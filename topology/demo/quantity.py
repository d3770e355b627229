"""Kubernetes resource quantities: format the ones the demo emits (reading them is
`topology.parsers.quantity`'s, the parser the mirror uses).

Base units used throughout the demo package: cpu in millicores, memory and hugepages in
bytes, every other resource (GPUs, Koordinator batch resources) as a plain integer.
"""

from __future__ import annotations

KIB = 1 << 10
MIB = 1 << 20
GIB = 1 << 30

CPU = "cpu"
MEMORY = "memory"
GPU = "nvidia.com/gpu"
BATCH_CPU = "kubernetes.io/batch-cpu"
BATCH_MEMORY = "kubernetes.io/batch-memory"
HUGEPAGES_1G = "hugepages-1Gi"
HUGEPAGES_2M = "hugepages-2Mi"
HUGEPAGES = (HUGEPAGES_1G, HUGEPAGES_2M)


def format_cpu(millis: int) -> str:
    return str(millis // 1000) if millis % 1000 == 0 else f"{millis}m"


def format_memory(n_bytes: int) -> str:
    """The shortest exact binary-suffixed form, as people write requests: 8Gi, 512Mi."""
    for suffix, size in (("Gi", GIB), ("Mi", MIB), ("Ki", KIB)):
        if n_bytes and n_bytes % size == 0:
            return f"{n_bytes // size}{suffix}"
    return str(n_bytes)


def format_kib(n_bytes: int) -> str:
    """How the kubelet reports node memory: always in Ki."""
    return f"{n_bytes // KIB}Ki"


def format_resource(resource: str, amount: int) -> str:
    if resource == CPU:
        return format_cpu(amount)
    if resource in (MEMORY, BATCH_MEMORY) or resource.startswith("hugepages-"):
        return format_memory(amount)
    return str(amount)


def format_resources(amounts: dict[str, int]) -> dict[str, str]:
    return {name: format_resource(name, value) for name, value in amounts.items()}
