"""Kubernetes resource quantities, parsed exactly (never through float).

Amounts are stored as integers in base units: CPU in millicores, everything
else (memory and hugepages in bytes, devices, pods) in whole units. Like
Kubernetes' `Quantity.MilliValue()` / `Value()`, a fraction is rounded up.
"""

from __future__ import annotations

import re
from decimal import ROUND_CEILING, Decimal, InvalidOperation
from functools import lru_cache

from topology.parsers.errors import FieldError

_BINARY = {"Ki": 2**10, "Mi": 2**20, "Gi": 2**30, "Ti": 2**40, "Pi": 2**50, "Ei": 2**60}
_DECIMAL = {
    "n": Decimal("1e-9"),
    "u": Decimal("1e-6"),
    "m": Decimal("1e-3"),
    "": Decimal(1),
    "k": Decimal(10) ** 3,
    "M": Decimal(10) ** 6,
    "G": Decimal(10) ** 9,
    "T": Decimal(10) ** 12,
    "P": Decimal(10) ** 15,
    "E": Decimal(10) ** 18,
}
# ASCII digits only, as Go's parser reads them (Python's \d also matches other scripts').
_QUANTITY = re.compile(
    r"^(?P<number>[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+))"
    r"(?:(?P<binary>Ki|Mi|Gi|Ti|Pi|Ei)|(?P<exponent>[eE][+-]?[0-9]+)|(?P<decimal>[numkMGTPE]?))$"
)
# Bounds that keep parsing cheap: a quantity's text, and its size before it is computed.
# Kubernetes counts amounts in 64-bit integers (Value/MilliValue), so nothing larger than
# 2**63 - 1 base units is meaningful; the text bound is far above any real quantity.
MAX_QUANTITY_CHARS = 64
MAX_AMOUNT = 2**63 - 1
MAX_DECIMAL_DIGITS = 22  # 10**22 > 2**63 * 1000: larger is refused before computing
MILLI_RESOURCES = frozenset({"cpu", "kubernetes.io/batch-cpu", "kubernetes.io/mid-cpu"})
_BATCH_MILLI = frozenset({"kubernetes.io/batch-cpu", "kubernetes.io/mid-cpu"})


def parse_quantity(value: object) -> Decimal:
    """Parse a quantity string ("500m", "1.5", "4Gi", "1e3", "100M") or an int exactly."""
    if isinstance(value, bool):
        raise FieldError(f"expected a quantity, got {value!r}")
    if isinstance(value, int):
        return Decimal(value)
    if not isinstance(value, str):
        raise FieldError(f"expected a quantity string, got {type(value).__name__}")
    if len(value) > MAX_QUANTITY_CHARS:
        raise FieldError(f"a quantity of more than {MAX_QUANTITY_CHARS} characters")
    # surrounding spaces: Quantity.UnmarshalJSON trims them before ParseQuantity
    match = _QUANTITY.match(value.strip(" \t\n\r"))
    if not match:
        raise FieldError(f"{value!r} is not a Kubernetes quantity")
    try:
        number = Decimal(match["number"])
    except InvalidOperation:
        raise FieldError(f"{value!r} is not a Kubernetes quantity") from None
    if match["binary"]:
        # ParseQuantity caps BinarySI amounts at 2^63 - 1 ("the max is just a simple cap")
        return min(number * _BINARY[match["binary"]], Decimal(MAX_AMOUNT))
    if match["exponent"]:
        exponent = int(match["exponent"][1:])
        if not number:
            return Decimal(0)  # zero at any exponent (scaleb would overflow the context)
        if number.adjusted() + exponent > MAX_DECIMAL_DIGITS:
            raise FieldError(f"{value!r} is larger than Kubernetes counts (2^63 - 1)")
        return number.scaleb(max(exponent, -MAX_QUANTITY_CHARS))
    return number * _DECIMAL[match["decimal"] or ""]


def to_base_units(resource: str, value: object) -> int:
    """A quantity as an exact integer: millicores for CPU, whole units otherwise.

    Koordinator's batch/mid CPU resources are already counted in millicores
    ("8522" means 8.522 cores), so they are kept as written.
    """
    if type(value) is str:
        return _string_to_base_units(resource, value)
    return _to_base_units(resource, value)


@lru_cache(maxsize=4096)
def _string_to_base_units(resource: str, value: str) -> int:
    """Memoised: a cluster writes the same few quantities ("4", "500m", "4Gi") on
    every pod and NRT, and a cold resync reads hundreds of thousands of them. (An
    error is raised afresh each time: lru_cache keeps results only.)"""
    return _to_base_units(resource, value)


def _to_base_units(resource: str, value: object) -> int:
    quantity = parse_quantity(value)
    if quantity < 0:
        raise FieldError(f"{value!r} is negative")
    if resource in MILLI_RESOURCES and resource not in _BATCH_MILLI:
        quantity = quantity * 1000
    amount = int(quantity.to_integral_value(rounding=ROUND_CEILING))
    if amount > MAX_AMOUNT:
        raise FieldError(f"{value!r} is larger than Kubernetes counts (2^63 - 1 base units)")
    return amount


def format_quantity(resource: str, amount: int) -> str:
    """The canonical Kubernetes string for a base-unit amount (inverse of to_base_units)."""
    if resource in MILLI_RESOURCES and resource not in _BATCH_MILLI:
        return str(amount // 1000) if amount % 1000 == 0 else f"{amount}m"
    for suffix in ("Ei", "Pi", "Ti", "Gi", "Mi", "Ki"):
        factor = _BINARY[suffix]
        if amount and amount % factor == 0:
            return f"{amount // factor}{suffix}"
    return str(amount)


def parse_resource_list(data: object) -> dict[str, int]:
    """A ResourceList ({"cpu": "2", "memory": "4Gi"}) in base units."""
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise FieldError(f"expected a map of resource quantities, got {type(data).__name__}")
    result: dict[str, int] = {}
    for name, value in data.items():
        try:
            result[str(name)] = to_base_units(str(name), value)
        except FieldError as exc:
            raise FieldError(f"{name}: {exc}") from None
    return result


def format_resource_list(amounts: dict[str, int]) -> dict[str, str]:
    return {name: format_quantity(name, amount) for name, amount in amounts.items()}
