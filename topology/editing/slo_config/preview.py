"""What a config does on each node's cache: schemata lines now and with the draft, and the
cache-dependent problems (an empty L3 mask, LS and BE sharing ways).

The lines are `topology.domain.resctrl.group_schemata`'s (formats.md §4.1–4.2):
Intel rounds mbaPercent up to a multiple of 10, AMD writes 2048 for 100 % and
int(160·p/100) otherwise. Nodes that get identical lines are grouped, so 5,000
nodes make a short table.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from topology.choices import ResctrlClass
from topology.domain.resctrl import (
    AMD_VENDOR,
    EffectiveClass,
    GroupSchemata,
    cat_ways,
    group_schemata,
    way_range,
)
from topology.editing.slo_config.issues import (
    ERROR,
    WARNING,
    QoSIssue,
    Severity,
    grouped_by_message,
)
from topology.editing.slo_config.node_selectors import first_match
from topology.editing.slo_config.strategies import (
    RESOURCE_QOS_KEY,
    StrategyRef,
    effective_resctrl,
    node_selectors,
    stating_layer,
    strategies,
)


@dataclass(frozen=True)
class NodeCache:
    """What the checks need to know of a node: its labels and, where koordlet runs, its L3.

    `koordlet` False: resctrl is not applied there (not a Koordinator node), but its
    labels still count when node strategies' selectors are checked for overlap.
    """

    name: str
    labels: Mapping[str, str] = field(default_factory=dict)
    vendor: str = ""
    cbm: str = ""
    l3_ids: tuple[int, ...] = (0,)
    koordlet: bool = True


@dataclass(frozen=True)
class SchemataPreview:
    """Nodes whose schemata are the same now and the same with the draft."""

    nodes: tuple[str, ...]
    vendor: str
    cbm: str
    l3_ids: tuple[int, ...]
    current_strategy: str | None  # None: the current config is not known
    draft_strategy: str
    current: tuple[GroupSchemata, ...]
    draft: tuple[GroupSchemata, ...]
    draft_classes: tuple[EffectiveClass, ...]

    @property
    def is_amd(self) -> bool:
        return self.vendor == AMD_VENDOR

    @property
    def ways(self) -> int:
        return cat_ways(self.cbm)

    @property
    def changed(self) -> bool:
        return self.current != self.draft

    @property
    def rows(self) -> list[tuple[str, GroupSchemata | None, GroupSchemata]]:
        """(group, current, draft) per resctrl group, for side-by-side display."""
        current = {s.group: s for s in self.current}
        return [(s.group, current.get(s.group), s) for s in self.draft]


class _Layout:
    """One config's strategy matching and effective settings, each computed once."""

    def __init__(self, config: Any) -> None:
        self.config = config
        self.selectors = node_selectors(config)
        self.refs = [ref for ref, _body in strategies(config)]
        self._effective: dict[int | None, dict[str, EffectiveClass]] = {}

    def strategy_of(self, node: NodeCache) -> int | None:
        return first_match(node.labels, self.selectors)

    def label(self, index: int | None) -> str:
        return "clusterStrategy" if index is None else self.refs[index + 1].label

    def effective(self, index: int | None) -> dict[str, EffectiveClass]:
        if index not in self._effective:
            self._effective[index] = effective_resctrl(self.config, index)
        return self._effective[index]


def schemata_preview(
    current: Any | None, draft: Any, nodes: Sequence[NodeCache]
) -> list[SchemataPreview]:
    """Per group of alike koordlet nodes: the schemata now (None: unknown) and with the draft."""
    after = _Layout(draft)
    before = _Layout(current) if current is not None else None
    members: dict[tuple[Any, ...], list[str]] = defaultdict(list)
    for node in nodes:
        if not node.koordlet:
            continue
        now = before.strategy_of(node) if before else None
        key = (after.strategy_of(node), now, node.vendor, node.cbm, node.l3_ids)
        members[key].append(node.name)
    return [
        _preview(after, before, key, names)
        for key, names in sorted(members.items(), key=lambda item: item[1][0])
    ]


def _preview(
    after: _Layout, before: _Layout | None, key: tuple[Any, ...], names: list[str]
) -> SchemataPreview:
    draft_index, current_index, vendor, cbm, ids = key
    draft_classes = after.effective(draft_index)
    current_lines: tuple[GroupSchemata, ...] = ()
    if before is not None:
        current_lines = tuple(group_schemata(before.effective(current_index), cbm, vendor, ids))
    return SchemataPreview(
        nodes=tuple(names),
        vendor=vendor,
        cbm=cbm,
        l3_ids=ids,
        current_strategy=before.label(current_index) if before else None,
        draft_strategy=after.label(draft_index),
        current=current_lines,
        draft=tuple(group_schemata(draft_classes, cbm, vendor, ids)),
        draft_classes=tuple(draft_classes[c] for c in ResctrlClass.values),
    )


def cache_issues(config: Any, nodes: Sequence[NodeCache]) -> list[QoSIssue]:
    """Problems that depend on each node's L3: an empty mask (error), LS/BE overlap (warning)."""
    layout = _Layout(config)
    found: list[tuple[Severity, str, str, str]] = []
    for node in nodes:
        ways = cat_ways(node.cbm)
        if not node.koordlet or not ways:
            continue
        index = layout.strategy_of(node)
        classes = layout.effective(index)
        for severity, path, message in _node_findings(config, index, classes, ways, node.cbm):
            found.append((severity, path, message, node.name))
    return grouped_by_message(found)


def _node_findings(
    config: Any, index: int | None, classes: Mapping[str, EffectiveClass], ways: int, cbm: str
) -> list[tuple[Severity, str, str]]:
    findings = []
    keys = ("catRangeStartPercent", "catRangeEndPercent")
    for qos_class, group in (
        (ResctrlClass.LSR, "LSR"),
        (ResctrlClass.LS, "LS"),
        (ResctrlClass.BE, "BE"),
    ):
        effective = classes[qos_class]
        bounds = way_range(ways, effective.start, effective.end)
        if bounds is not None and bounds[0] == bounds[1]:
            layer = stating_layer(config, index, qos_class, keys)
            findings.append(
                (
                    ERROR,
                    _path(layer, qos_class),
                    f"{group}: {effective.start}–{effective.end} % of {ways} L3 ways (cbm {cbm}) "
                    f"gives startWay = endWay = {bounds[0]}, an empty mask `0`: "
                    "the kernel rejects the schemata, so koordlet cannot set this group",
                )
            )
    overlap = _ls_be_overlap(classes, ways)
    if overlap:
        layer = stating_layer(config, index, ResctrlClass.BE, keys)
        findings.append((WARNING, _path(layer, ResctrlClass.BE), overlap + f" (cbm {cbm})"))
    return findings


def _ls_be_overlap(classes: Mapping[str, EffectiveClass], ways: int) -> str:
    ls = way_range(ways, classes[ResctrlClass.LS].start, classes[ResctrlClass.LS].end)
    be = way_range(ways, classes[ResctrlClass.BE].start, classes[ResctrlClass.BE].end)
    if ls is None or be is None or ls[0] == ls[1] or be[0] == be[1]:
        return ""
    low, high = max(ls[0], be[0]), min(ls[1], be[1])
    if low >= high:
        return ""
    return (
        f"LS {_ways(*ls)} and BE {_ways(*be)} of {ways} overlap on {_ways(low, high)}: "
        "BE pods compete with LS pods for that part of the L3"
    )


def _ways(start: int, end: int) -> str:
    """Ways [start, end) as people count them: "way 3" or "ways 0–2"."""
    return f"way {start}" if end - start == 1 else f"ways {start}–{end - 1}"


def _path(layer: StrategyRef, qos_class: str) -> str:
    return f"{RESOURCE_QOS_KEY}.{layer.path}.{qos_class}.resctrlQOS"
