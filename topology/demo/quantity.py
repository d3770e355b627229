"""Kubernetes resource quantities: parse any canonical string, format the ones we emit.

Base units used throughout the demo package: cpu in millicores, memory and hugepages in
bytes, every other resource (GPUs, Koordinator batch resources) as a plain integer.
"""

from __future__ import annotations

import math
import re
from fractions import Fraction

KIB = 1 << 10
MIB = 1 << 20
GIB = 1 << 30

CPU = "cpu"
MEMORY = "memory"
GPU = "nvidia.com/gpu"
BATCH_CPU = "kubernetes.io/batch-cpu"
BATCH_MEMORY = "kubernetes.io/batch-memory"

_BINARY = {"Ki": 1 << 10, "Mi": 1 << 20, "Gi": 1 << 30, "Ti": 1 << 40, "Pi": 1 << 50, "Ei": 1 << 60}
_DECIMAL = {
    "n": Fraction(1, 10**9),
    "u": Fraction(1, 10**6),
    "m": Fraction(1, 10**3),
    "": Fraction(1),
    "k": Fraction(10**3),
    "M": Fraction(10**6),
    "G": Fraction(10**9),
    "T": Fraction(10**12),
    "P": Fraction(10**15),
    "E": Fraction(10**18),
}
_QUANTITY = re.compile(
    r"^(?P<num>[+-]?(?:\d+(?:\.\d*)?|\.\d+))"
    r"(?:(?P<suffix>Ki|Mi|Gi|Ti|Pi|Ei|n|u|m|k|M|G|T|P|E)|(?P<exp>[eE][+-]?\d+))?$"
)


def parse_quantity(text: str) -> Fraction:
    """Exact value of a Kubernetes quantity string; ValueError when it is not one."""
    match = _QUANTITY.match(text.strip()) if isinstance(text, str) else None
    if match is None:
        raise ValueError(f"not a Kubernetes quantity: {text!r}")
    number = Fraction(match["num"])
    if match["exp"]:
        return number * Fraction(10) ** int(match["exp"][1:])
    suffix = match["suffix"] or ""
    return number * (_BINARY[suffix] if suffix in _BINARY else _DECIMAL[suffix])


def to_base_units(resource: str, text: str) -> int:
    """Millicores for cpu, bytes for memory-like resources, integers otherwise (rounded up)."""
    value = parse_quantity(text)
    if resource == CPU:
        value *= 1000
    return math.ceil(value)


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


def parse_resources(resources: dict[str, str] | None) -> dict[str, int]:
    return {name: to_base_units(name, text) for name, text in (resources or {}).items()}
