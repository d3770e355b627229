"""Go `time.Duration` strings ("12h0m0s", "30m", "1.5h", "0") as whole seconds."""

from __future__ import annotations

import re
from decimal import ROUND_CEILING, Decimal

from topology.parsers.errors import FieldError

_PART = re.compile(r"(\d+(?:\.\d*)?|\.\d+)(ns|us|µs|ms|s|m|h)")
_UNIT_SECONDS = {
    "ns": Decimal("1e-9"),
    "us": Decimal("1e-6"),
    "µs": Decimal("1e-6"),
    "ms": Decimal("1e-3"),
    "s": Decimal(1),
    "m": Decimal(60),
    "h": Decimal(3600),
}


def parse_go_duration(text: object) -> int:
    if not isinstance(text, str) or not text:
        raise FieldError(f"expected a duration such as '1h30m', got {text!r}")
    if text == "0":
        return 0
    position = 0
    total = Decimal(0)
    for match in _PART.finditer(text):
        if match.start() != position:
            break
        total += Decimal(match[1]) * _UNIT_SECONDS[match[2]]
        position = match.end()
    if position != len(text):
        raise FieldError(f"{text!r} is not a duration such as '1h30m' or '45s'")
    return int(total.to_integral_value(rounding=ROUND_CEILING))


def format_go_duration(seconds: int) -> str:
    """The form Go prints: '12h0m0s', '30m0s', '45s', '0s'."""
    hours, rest = divmod(seconds, 3600)
    minutes, secs = divmod(rest, 60)
    if hours:
        return f"{hours}h{minutes}m{secs}s"
    if minutes:
        return f"{minutes}m{secs}s"
    return f"{secs}s"
