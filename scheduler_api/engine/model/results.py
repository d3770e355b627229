"""What every scheduler reproduction returns, and how values are rendered the Go way.

`PlacementResult` is the one result type shared by the scheduler-plugins, Crane and
Koordinator reproductions, so a caller can evaluate a pod against any of them
uniformly. Every refusal carries machine-readable `Reason`s.

The rendering helpers reproduce `resource.Quantity.String()` and the Linux cpuset
list format, because annotation values written by the schedulers must match
byte for byte.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from functools import lru_cache
from types import MappingProxyType

EMPTY_ANNOTATIONS: Mapping[str, str] = MappingProxyType({})
EMPTY_NUMA: Mapping[int, Mapping[str, int]] = MappingProxyType({})


class ReasonCheck(StrEnum):
    """Which check refused the pod (or why a score could not be computed)."""

    NO_TOPOLOGY = "no-topology"
    INVALID_ANNOTATION = "invalid-annotation"
    MISSING_ON_NODE = "missing-on-node"
    SINGLE_NUMA_NODE = "single-numa-node"
    INSUFFICIENT_NUMA = "insufficient-numa"
    POLICY_MISMATCH = "numa-topology-policy-mismatch"
    INVALID_CPU_REQUEST = "invalid-cpu-request"
    INVALID_CPU_TOPOLOGY = "invalid-cpu-topology"
    SMT_ALIGNMENT = "smt-alignment"
    CPU_BIND_POLICY_CONFLICT = "cpu-bind-policy-conflict"
    UNSATISFIED_NUMA = "unsatisfied-numa-resource"
    UNALIGNED_HINT = "numa-hint-unaligned"
    INSUFFICIENT_CPUS = "insufficient-cpus"
    RESERVATION = "reservation"
    SCORE_UNDEFINED = "score-undefined"
    NODE_UNSCHEDULABLE = "node-unschedulable"
    NODE_RESOURCES_FIT = "node-resources-fit"
    KUBELET_ADMISSION = "kubelet-admission"
    SCHEDULER_ERROR = "scheduler-error"  # the scheduler itself fails on this node


MEMORY_LIKE_PREFIXES = ("memory", "hugepages-", "ephemeral-storage", "storage")


def human_amount(resource: str, amount: int) -> str:
    """An amount in base units written for a person: CPUs for cpu ("6 CPUs", "92.85 CPUs"),
    the largest binary unit for bytes ("2Gi" when exact, "13.5Gi" to three significant
    digits otherwise), a plain count for anything else."""
    if resource == "cpu":
        cpus = f"{amount / 1000:.3f}".rstrip("0").rstrip(".")
        return f"{cpus} CPU" if cpus == "1" else f"{cpus} CPUs"
    if resource.startswith(MEMORY_LIKE_PREFIXES):
        return human_bytes(amount)
    return str(amount)


def human_bytes(amount: int) -> str:
    """Bytes in the largest binary unit that holds at least one: exact when it divides,
    else rounded to three significant digits ("13.5Gi")."""
    exponent = 0
    while exponent < len(BINARY_SUFFIXES) - 1 and abs(amount) >= 1024 ** (exponent + 1):
        exponent += 1
    unit = 1024**exponent
    if amount % unit == 0:
        return f"{amount // unit}{BINARY_SUFFIXES[exponent]}"
    return f"{amount / unit:.3g}{BINARY_SUFFIXES[exponent]}"


@dataclass(frozen=True, slots=True)
class Reason:
    """One machine-readable cause: which check, on which NUMA zone, which resource, by how much.

    `short_by` is in base units (cpu millicores, bytes, device counts). `message` keeps
    the upstream status text verbatim when there is one.
    """

    check: ReasonCheck
    numa_id: int | None = None
    resource: str | None = None
    short_by: int | None = None
    container: str | None = None
    message: str = ""

    def __str__(self) -> str:
        parts: list[str] = []
        if self.resource is not None and self.short_by is not None:
            parts.append(f"{self.resource} short by {human_amount(self.resource, self.short_by)}")
        elif self.resource is not None:
            parts.append(f"{self.resource} unavailable")
        if self.numa_id is not None:
            parts.append(f"on zone {self.numa_id}")
        if self.container is not None:
            parts.append(f"for container {self.container}")
        core = " ".join(parts) or self.message or str(self.check)
        return f"{core}; {self.check}"


@lru_cache(maxsize=16_384)
def reason_text(reason: Reason) -> str:
    """`str(reason)`, kept: an answer quotes the same reasons on many nodes (a shortfall
    shared by every node short of it, the same NUMA refusal on alike machines)."""
    return str(reason)


@dataclass(frozen=True, slots=True)
class PlacementResult:
    """The verdict of one scheduler on one node for one pod.

    `score` is the plugin's raw 0-100 node score before normalisation, or None when the
    node was filtered out or the score is undefined. `numa_zones` are the NUMA ids the
    scheduler chose (empty when it chose none). `cpuset` is only filled by an
    allocation step. `annotations` holds what the scheduler would write on the pod.
    `notes` explain passes that are not obvious (plugin skipped, policy none, ...).
    `numa_resources` are the per-NUMA amounts the pod would hold, as the scheduler
    publishes them (so a what-if can assume the pod and place the next one).
    """

    fits: bool
    score: int | None = None
    reasons: tuple[Reason, ...] = ()
    numa_zones: tuple[int, ...] = ()
    cpuset: frozenset[int] | None = None
    annotations: Mapping[str, str] = field(default_factory=lambda: EMPTY_ANNOTATIONS)
    notes: tuple[str, ...] = ()
    numa_resources: Mapping[int, Mapping[str, int]] = field(default_factory=lambda: EMPTY_NUMA)


CORDONED = Reason(ReasonCheck.NODE_UNSCHEDULABLE, message="node is cordoned")


def short_on_node(resource: str, short_by: int) -> Reason:
    """NodeResourcesFit's refusal: the node's free `resource` is `short_by` too little."""
    return Reason(ReasonCheck.NODE_RESOURCES_FIT, None, resource, short_by)


def refused(*reasons: Reason, notes: tuple[str, ...] = ()) -> PlacementResult:
    """A filtered-out node."""
    return PlacementResult(fits=False, reasons=reasons, notes=notes)


# --- Go rendering helpers -------------------------------------------------------------


class QuantityFormat(StrEnum):
    """`resource.Format` of a Kubernetes Quantity; it decides how the value is printed."""

    DECIMAL_SI = "DecimalSI"
    BINARY_SI = "BinarySI"
    DECIMAL_EXPONENT = "DecimalExponent"


BINARY_SUFFIXES = ("", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei")
DECIMAL_SUFFIXES = {-9: "n", -6: "u", -3: "m", 0: "", 3: "k", 6: "M", 9: "G", 12: "T", 15: "P"}
DECIMAL_SUFFIXES[18] = "E"


def quantity_format_of(text: str) -> QuantityFormat:
    """The Format Go's ParseQuantity assigns to a quantity string ("8Gi" -> BinarySI)."""
    body = text.strip().lstrip("+-")
    suffix = body.lstrip("0123456789.")
    if suffix in BINARY_SUFFIXES[1:]:
        return QuantityFormat.BINARY_SI
    if len(suffix) > 1 and suffix[0] in "eE":
        return QuantityFormat.DECIMAL_EXPONENT
    return QuantityFormat.DECIMAL_SI


def _strip_factors(value: int, base: int) -> tuple[int, int]:
    times = 0
    while value != 0 and value % base == 0:
        value //= base
        times += 1
    return value, times


def _go_mod(a: int, b: int) -> int:
    """Go's `%`: the result takes the sign of the dividend."""
    r = abs(a) % b
    return -r if a < 0 else r


def _decimal_canonical(value: int, scale: int, fmt: QuantityFormat) -> str:
    amount, times = _strip_factors(value, 10)
    exponent = scale + times
    if _go_mod(exponent, 3) in (1, -2):
        amount, exponent = amount * 10, exponent - 1
    elif _go_mod(exponent, 3) in (2, -1):
        amount, exponent = amount * 100, exponent - 2
    if fmt is QuantityFormat.DECIMAL_EXPONENT:
        return f"{amount}e{exponent}" if exponent else str(amount)
    return f"{amount}{DECIMAL_SUFFIXES[exponent]}"


def format_quantity(value: int, fmt: QuantityFormat, *, milli: bool = False) -> str:
    """`resource.Quantity.String()` of `value` (or `value` thousandths when `milli`).

    Reproduces CanonicalizeBytes: BinarySI falls back to DecimalSI below 1024 or when
    the value is fractional; decimal mantissas drop trailing zeros in groups of three.
    """
    if value == 0:
        return "0"
    scale = -3 if milli else 0
    if fmt is QuantityFormat.BINARY_SI:
        exact = not milli or value % 1000 == 0
        whole = value // 1000 if milli else value
        if exact and not -1024 < whole < 1024:
            amount, exponent = _strip_factors(whole, 1024)
            return f"{amount}{BINARY_SUFFIXES[min(exponent, 6)]}"
        fmt = QuantityFormat.DECIMAL_SI
    return _decimal_canonical(value, scale, fmt)


def format_cpuset(cpus: Iterable[int]) -> str:
    """Linux cpu list format, as `cpuset.CPUSet.String()`: "0-3,8,10-11"."""
    ordered = sorted(set(cpus))
    ranges: list[str] = []
    start = prev = None
    for cpu in ordered:
        if prev is not None and cpu == prev + 1:
            prev = cpu
            continue
        if start is not None:
            ranges.append(f"{start}-{prev}" if start != prev else str(start))
        start = prev = cpu
    if start is not None:
        ranges.append(f"{start}-{prev}" if start != prev else str(start))
    return ",".join(ranges)


def parse_cpuset(text: str) -> frozenset[int]:
    """Parse a Linux cpu list ("0-3,8"); the empty string is the empty set."""
    cpus: set[int] = set()
    for part in filter(None, (p.strip() for p in text.split(","))):
        low, _, high = part.partition("-")
        cpus.update(range(int(low), int(high or low) + 1))
    return frozenset(cpus)
