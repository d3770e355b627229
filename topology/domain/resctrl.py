"""resctrl QoS as koordlet applies it (formats.md §4): effective settings and schemata lines.

Pure functions. A node's effective settings are Koordinator's defaults, overridden
by the cluster strategy, overridden by the first node strategy whose selector
matches the node. From those, koordlet writes one schemata file per group (LSR,
LS, BE; systemClass is not handled):

- `L3:<id>=<mask>;…` with ways = bit length of the L3 cbm, startWay =
  ceil(ways·start/100), endWay = ceil(ways·end/100), mask = (1<<end) − (1<<start);
- `MB:<id>=<value>;…` with Intel rounding the percent up to a multiple of 10 and
  AMD using 2048 for 100 % and int(160·p/100) otherwise.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from topology.choices import ResctrlClass

AMD_VENDOR = "AuthenticAMD"
AMD_UNLIMITED = 2048
AMD_GBPS_PER_100 = 160  # 25 * 8 * 0.8 Gbps: EPYC Milan; other SKUs differ (formats.md §4.2)
GROUPS = ((ResctrlClass.LSR, "LSR"), (ResctrlClass.LS, "LS"), (ResctrlClass.BE, "BE"))


@dataclass(frozen=True)
class ResctrlValues:
    """One class's resctrlQOS as a strategy states it; None: not stated there."""

    enable: bool | None = None
    start: int | None = None
    end: int | None = None
    mba: int | None = None


DEFAULTS: Mapping[str, ResctrlValues] = {
    ResctrlClass.LSR: ResctrlValues(False, 0, 100, 100),
    ResctrlClass.LS: ResctrlValues(False, 0, 100, 100),
    ResctrlClass.BE: ResctrlValues(False, 0, 30, 100),
    ResctrlClass.SYSTEM: ResctrlValues(False, 0, 100, 100),
}


@dataclass(frozen=True)
class EffectiveClass:
    qos_class: str
    enable: bool
    start: int
    end: int
    mba: int | None
    origins: tuple[str, ...]  # which layers stated something, e.g. ("default", "cluster")

    @property
    def label(self) -> str:
        return str(ResctrlClass(self.qos_class).label)


@dataclass(frozen=True)
class Issue:
    level: str  # "warning" (koordlet skips or the kernel rejects) or "info"
    subject: str
    message: str


@dataclass(frozen=True)
class GroupSchemata:
    group: str
    qos_class: str
    start_way: int | None
    end_way: int | None
    l3_mask: str | None
    l3_line: str | None
    mb_value: int | None
    mb_line: str | None


def effective_class(
    qos_class: str, layers: Sequence[tuple[str, ResctrlValues | None]]
) -> EffectiveClass:
    """Defaults, then each named layer in order; a stated value overrides."""
    merged = DEFAULTS[qos_class]
    origins = ["default"]
    for name, values in layers:
        if values is None:
            continue
        origins.append(name)
        merged = ResctrlValues(
            *(
                getattr(values, f) if getattr(values, f) is not None else getattr(merged, f)
                for f in ("enable", "start", "end", "mba")
            )
        )
    return EffectiveClass(
        qos_class,
        bool(merged.enable),
        int(merged.start or 0),
        int(merged.end if merged.end is not None else 100),
        merged.mba,
        tuple(origins),
    )


def cat_ways(cbm: str) -> int:
    """Ways of the L3 from its cbm_mask hex; 0 when the mask is unusable."""
    try:
        value = int(cbm, 16)
    except ValueError:
        return 0
    return value.bit_length() if value and (value + 1) & value == 0 else 0


def way_range(ways: int, start: int, end: int) -> tuple[int, int] | None:
    if ways <= 0 or not 0 <= start < end <= 100:
        return None
    return math.ceil(ways * start / 100), math.ceil(ways * end / 100)


def l3_mask(ways: int, start: int, end: int) -> str | None:
    bounds = way_range(ways, start, end)
    if bounds is None:
        return None
    return format((1 << bounds[1]) - (1 << bounds[0]), "x")


def mb_value(percent: int | None, vendor: str) -> int | None:
    if percent is None or not 1 <= percent <= 100:
        return None
    if vendor == AMD_VENDOR:
        return AMD_UNLIMITED if percent == 100 else int(AMD_GBPS_PER_100 * percent / 100)
    return percent if percent % 10 == 0 else percent // 10 * 10 + 10


def _line(kind: str, ids: Iterable[int], value: str) -> str:
    return f"{kind}:" + "".join(f"{i}={value};" for i in ids)


def group_schemata(
    classes: Mapping[str, EffectiveClass], cbm: str, vendor: str, ids: Sequence[int]
) -> list[GroupSchemata]:
    ways = cat_ways(cbm)
    result = []
    for qos_class, group in GROUPS:
        effective = classes[qos_class]
        bounds = way_range(ways, effective.start, effective.end)
        mask = l3_mask(ways, effective.start, effective.end)
        mb = mb_value(effective.mba, vendor)
        result.append(
            GroupSchemata(
                group=group,
                qos_class=qos_class,
                start_way=bounds[0] if bounds else None,
                end_way=bounds[1] if bounds else None,
                l3_mask=mask,
                l3_line=_line("L3", ids, mask) if mask is not None else None,
                mb_value=mb,
                mb_line=_line("MB", ids, str(mb)) if mb is not None else None,
            )
        )
    return result


def class_issues(subject: str, qos_class: str, values: ResctrlValues) -> list[Issue]:
    """What koordlet would skip or the kernel refuse, for one stated class."""
    issues = []
    label = ResctrlClass(qos_class).label
    if qos_class == ResctrlClass.SYSTEM:
        issues.append(Issue("info", subject, "systemClass resctrlQOS is not applied by koordlet"))
    start, end = values.start, values.end
    if (start is not None and not 0 <= start <= 100) or (end is not None and not 0 <= end <= 100):
        issues.append(Issue("warning", subject, f"{label}: cat range outside 0–100 %"))
    elif start is not None and end is not None and start >= end:
        issues.append(
            Issue(
                "warning",
                subject,
                f"{label}: catRangeStartPercent {start} ≥ end {end}; koordlet writes no L3 line",
            )
        )
    if values.mba is not None and not 1 <= values.mba <= 100:
        issues.append(
            Issue(
                "warning",
                subject,
                f"{label}: mbaPercent {values.mba} is outside 1–100; koordlet writes no MB line",
            )
        )
    if values.enable is False and (start is not None or end is not None):
        issues.append(
            Issue(
                "info",
                subject,
                f"{label}: disabled, so the schemata is written but no pod is moved into the group",
            )
        )
    return issues


def schemata_issues(
    subject: str, classes: Mapping[str, EffectiveClass], cbm: str, vendor: str
) -> list[Issue]:
    """Problems that only show once a node's cache and vendor are known."""
    ways = cat_ways(cbm)
    if not ways:
        return [Issue("warning", subject, f"L3 cbm mask {cbm!r} is not usable; no L3 lines")]
    issues = []
    for qos_class, group in GROUPS:
        effective = classes[qos_class]
        if l3_mask(ways, effective.start, effective.end) == "0":
            issues.append(
                Issue(
                    "warning",
                    subject,
                    f"{group}: {effective.start}–{effective.end} % of "
                    f"{ways} ways is an empty mask; the kernel rejects it",
                )
            )
        mba = effective.mba
        if vendor != AMD_VENDOR and mba is not None and 1 <= mba <= 100 and mba % 10:
            issues.append(
                Issue(
                    "info",
                    subject,
                    f"{group}: mbaPercent {mba} is rounded up to {mb_value(mba, vendor)} on Intel",
                )
            )
    if vendor == AMD_VENDOR:
        issues.append(
            Issue(
                "info",
                subject,
                "AMD MB values use EPYC Milan's 160 (25·8·0.8 Gbps) per 100 %; other SKUs differ",
            )
        )
    return issues


def shared_ways(classes: Mapping[str, EffectiveClass], ways: int) -> dict[str, set[int]]:
    """Ways each group may use, for the L3 bar (overlaps are where groups compete)."""
    result: dict[str, set[int]] = {}
    for qos_class, group in GROUPS:
        bounds = way_range(ways, classes[qos_class].start, classes[qos_class].end)
        result[group] = set(range(*bounds)) if bounds else set()
    return result
