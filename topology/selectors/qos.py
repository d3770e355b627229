"""The QoS page: the stored slo-controller-config, each node's effective resctrl
settings, and the schemata lines koordlet would write.

Nodes sharing a matched strategy, CPU vendor, L3 mask and socket ids get the same
lines, so they are grouped: the page stays short at 5,000 nodes. Four queries.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from scheduler_api.engine import LabelRequirement, LabelSelector, match_selector
from topology.choices import Flavour, ResctrlClass
from topology.domain.resctrl import (
    EffectiveClass,
    GroupSchemata,
    Issue,
    ResctrlValues,
    cat_ways,
    class_issues,
    effective_class,
    group_schemata,
    schemata_issues,
)
from topology.editing.slo_config.preview import NodeCache
from topology.models import Cluster, Node, QoSConfig, QoSStrategy, ResctrlSetting

CLUSTER = "cluster"


@dataclass(frozen=True)
class QoSGroup:
    """Nodes that get identical schemata."""

    strategy: str
    vendor: str
    cbm: str
    l3_ids: tuple[int, ...]
    nodes: tuple[str, ...]
    classes: tuple[EffectiveClass, ...]
    schemata: tuple[GroupSchemata, ...]
    issues: tuple[Issue, ...]

    @property
    def ways(self) -> int:
        return cat_ways(self.cbm)

    @property
    def is_amd(self) -> bool:
        return self.vendor == "AuthenticAMD"


@dataclass(frozen=True)
class QoSPage:
    config: QoSConfig | None
    strategies: tuple[QoSStrategy, ...]
    groups: tuple[QoSGroup, ...]
    issues: tuple[Issue, ...]
    nodes_without_koordlet: int


def resctrl_values(setting: ResctrlSetting) -> ResctrlValues:
    return ResctrlValues(
        setting.enable,
        setting.cat_range_start_percent,
        setting.cat_range_end_percent,
        setting.mba_percent,
    )


def label_selector(raw: Mapping[str, Any] | None) -> LabelSelector | None:
    if raw is None:
        return None
    expressions = tuple(
        LabelRequirement(e.get("key", ""), e.get("operator", ""), tuple(e.get("values") or ()))
        for e in raw.get("matchExpressions") or ()
    )
    return LabelSelector(dict(raw.get("matchLabels") or {}), expressions)


def strategy_name(strategy: QoSStrategy) -> str:
    return CLUSTER if strategy.is_cluster_strategy else strategy.name or f"#{strategy.position}"


def matched_strategy(
    labels: Mapping[str, str], strategies: Sequence[QoSStrategy]
) -> QoSStrategy | None:
    """Koordinator takes the first node strategy whose selector matches."""
    for strategy in strategies:
        if strategy.is_cluster_strategy or strategy.node_selector is None:
            continue
        if match_selector(labels, label_selector(strategy.node_selector)):
            return strategy
    return None


def effective_classes(
    strategies: Sequence[QoSStrategy], node_strategy: QoSStrategy | None
) -> dict[str, EffectiveClass]:
    cluster = next((s for s in strategies if s.is_cluster_strategy), None)
    layers = [s for s in (cluster, node_strategy) if s is not None]
    stated = [
        (strategy_name(s), {r.qos_class: resctrl_values(r) for r in s.resctrl.all()})
        for s in layers
    ]
    return {
        qos_class: effective_class(qos_class, [(name, by.get(qos_class)) for name, by in stated])
        for qos_class in ResctrlClass.values
    }


def qos_page(cluster: Cluster) -> QoSPage:
    config = (
        QoSConfig.objects.filter(cluster=cluster).prefetch_related("strategies__resctrl").first()
    )
    strategies = tuple(config.strategies.all()) if config else ()
    nodes = list(
        Node.objects.filter(cluster=cluster, topology__flavour=Flavour.KOORDINATOR)
        .order_by("name")
        .values_list("name", "labels", "topology__koordlet")
    )
    others = Node.objects.filter(cluster=cluster).count() - len(nodes)
    issues = [i for s in strategies for r in s.resctrl.all() for i in _stated_issues(s, r)]
    groups, matches = _groups(nodes, strategies)
    for strategy in strategies:
        if not strategy.is_cluster_strategy and not matches[strategy.position]:
            issues.append(Issue("info", strategy_name(strategy), "its selector matches no node"))
    return QoSPage(config, strategies, tuple(groups), tuple(issues), others)


def _stated_issues(strategy: QoSStrategy, setting: ResctrlSetting) -> list[Issue]:
    return class_issues(strategy_name(strategy), setting.qos_class, resctrl_values(setting))


def _groups(
    nodes: Sequence[tuple[str, dict[str, str], dict[str, Any] | None]],
    strategies: Sequence[QoSStrategy],
) -> tuple[list[QoSGroup], dict[int, int]]:
    members: dict[tuple[int, str, str, tuple[int, ...]], list[str]] = defaultdict(list)
    matches: dict[int, int] = defaultdict(int)
    by_position = {s.position: s for s in strategies}
    for name, labels, koordlet in nodes:
        info = (koordlet or {}).get("cpu_basic_info") or {}
        pools = (koordlet or {}).get("cpu_shared_pools") or []
        sockets = tuple(sorted({int(pool["socket"]) for pool in pools}))
        strategy = matched_strategy(labels or {}, strategies)
        position = strategy.position if strategy else 0
        matches[position] += 1
        key = (position, info.get("vendorID", ""), info.get("catL3CbmMask", ""), sockets)
        members[key].append(name)
    groups = []
    for (position, vendor, cbm, sockets), names in sorted(members.items()):
        node_strategy = by_position.get(position) if position else None
        classes = effective_classes(strategies, node_strategy)
        label = CLUSTER if node_strategy is None else f"{CLUSTER} + {strategy_name(node_strategy)}"
        ids = sockets or (0,)
        groups.append(
            QoSGroup(
                strategy=label,
                vendor=vendor or "unknown vendor",
                cbm=cbm,
                l3_ids=ids,
                nodes=tuple(names),
                classes=tuple(classes[c] for c in ResctrlClass.values),
                schemata=tuple(group_schemata(classes, cbm, vendor, ids)),
                issues=tuple(schemata_issues(label, classes, cbm, vendor)),
            )
        )
    return groups, matches


def qos_node_caches(cluster: Cluster) -> list[NodeCache]:
    """Every node's labels, and for Koordinator nodes the L3 facts koordlet reports; one query.

    Non-Koordinator nodes count for node-strategy overlap (the webhook lists all
    nodes) but get no schemata: no koordlet applies resctrl there.
    """
    rows = (
        Node.objects.filter(cluster=cluster)
        .order_by("name")
        .values_list(
            "name",
            "labels",
            "topology__flavour",
            "topology__koordlet__cpu_basic_info",
            "topology__koordlet__cpu_shared_pools",
        )
    )
    return [_node_cache(*row) for row in rows]


def _node_cache(name: str, labels: Any, flavour: str | None, info: Any, pools: Any) -> NodeCache:
    info = info if isinstance(info, dict) else {}
    pools = pools if isinstance(pools, list) else []
    sockets = tuple(
        sorted({int(p["socket"]) for p in pools if isinstance(p, dict) and "socket" in p})
    )
    return NodeCache(
        name=name,
        labels=labels if isinstance(labels, dict) else {},
        vendor=str(info.get("vendorID", "")),
        cbm=str(info.get("catL3CbmMask", "")),
        l3_ids=sockets or (0,),
        koordlet=flavour == Flavour.KOORDINATOR,
    )
