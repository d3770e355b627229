"""A cluster's QoS ConfigMap as stored, and what it means on each Koordinator node.

The rules (strategy matching, defaults, schemata lines) are the dashboard's, in
`topology.selectors.qos` and `topology.domain.resctrl`; this module only applies
them node by node for a page of the API.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from django.db.models import QuerySet

from topology.choices import Flavour, ResctrlClass
from topology.domain.resctrl import (
    EffectiveClass,
    GroupSchemata,
    Issue,
    group_schemata,
    schemata_issues,
)
from topology.models import Cluster, Node, QoSConfig, QoSStrategy
from topology.selectors.qos import effective_classes, matched_strategy, strategy_name
from topology.services.mirror.exporter import render_resource_qos


@dataclass(frozen=True)
class StoredQoS:
    config: QoSConfig
    resource_qos_config: dict[str, Any]  # as Koordinator reads it, rendered from the mirror


@dataclass(frozen=True)
class NodeQoS:
    node: str
    node_strategy: str | None  # None: the cluster strategy alone
    strategy: dict[str, Any]
    resctrl: tuple[EffectiveClass, ...]
    vendor: str
    cat_l3_cbm_mask: str
    l3_ids: tuple[int, ...]
    schemata: tuple[GroupSchemata, ...]
    issues: tuple[Issue, ...]


def stored_qos(cluster: Cluster) -> StoredQoS | None:
    """The ConfigMap with resource-qos-config rendered back from the typed rows."""
    config = QoSConfig.objects.filter(cluster=cluster).first()
    if config is None:
        return None
    return StoredQoS(config, render_resource_qos(config))


def qos_strategies(cluster: Cluster) -> tuple[QoSStrategy, ...]:
    """The ConfigMap's strategies with their resctrl settings, in order; three queries."""
    config = (
        QoSConfig.objects.filter(cluster=cluster).prefetch_related("strategies__resctrl").first()
    )
    return tuple(config.strategies.all()) if config else ()


def qos_nodes(cluster: Cluster) -> QuerySet[Node]:
    """Koordinator nodes (koordlet applies resctrl): labels and koordlet's CPU information."""
    return (
        Node.objects.filter(cluster=cluster, topology__flavour=Flavour.KOORDINATOR)
        .select_related("topology")
        .only("name", "labels", "topology__koordlet")
        .order_by("name")
    )


def node_qos_views(strategies: Sequence[QoSStrategy], nodes: Sequence[Node]) -> list[NodeQoS]:
    """The effective strategy and the schemata of each node; no query."""
    return [_node_qos(node, strategies) for node in nodes]


def _node_qos(node: Node, strategies: Sequence[QoSStrategy]) -> NodeQoS:
    koordlet = node.topology.koordlet or {}
    info = koordlet.get("cpu_basic_info") or {}
    vendor, cbm = str(info.get("vendorID", "")), str(info.get("catL3CbmMask", ""))
    # One L3 per socket, as the dashboard reads it from koordlet's shared pools.
    pools = koordlet.get("cpu_shared_pools") or []
    l3_ids = tuple(sorted({int(pool["socket"]) for pool in pools})) or (0,)
    node_strategy = matched_strategy(node.labels or {}, strategies)
    classes = effective_classes(strategies, node_strategy)
    label = "cluster" if node_strategy is None else f"cluster + {strategy_name(node_strategy)}"
    return NodeQoS(
        node=node.name,
        node_strategy=strategy_name(node_strategy) if node_strategy else None,
        strategy=merged_strategy(strategies, node_strategy, classes),
        resctrl=tuple(classes[c] for c in ResctrlClass.values),
        vendor=vendor,
        cat_l3_cbm_mask=cbm,
        l3_ids=l3_ids,
        schemata=tuple(group_schemata(classes, cbm, vendor, l3_ids)),
        issues=tuple(schemata_issues(label, classes, cbm, vendor)),
    )


def merged_strategy(
    strategies: Sequence[QoSStrategy],
    node_strategy: QoSStrategy | None,
    classes: Mapping[str, EffectiveClass],
) -> dict[str, Any]:
    """The strategy the node gets: cluster body, node body over it, effective resctrlQOS."""
    cluster = next((s for s in strategies if s.is_cluster_strategy), None)
    merged: dict[str, Any] = {}
    for strategy in (cluster, node_strategy):
        if strategy is not None:
            merged = merge_cfg(merged, strategy.body)
    for qos_class, effective in classes.items():
        merged.setdefault(qos_class, {})["resctrlQOS"] = {
            "enable": effective.enable,
            "catRangeStartPercent": effective.start,
            "catRangeEndPercent": effective.end,
            **({"mbaPercent": effective.mba} if effective.mba is not None else {}),
        }
    return merged


def merge_cfg(base: Mapping[str, Any], overlay: Mapping[str, Any]) -> dict[str, Any]:
    """Koordinator's MergeCfg: objects merge key by key, other values replace, null is skipped."""
    merged = copy.deepcopy(dict(base))
    for key, value in overlay.items():
        if value is None:
            continue
        if isinstance(value, Mapping) and isinstance(merged.get(key), Mapping):
            merged[key] = merge_cfg(merged[key], value)
        else:
            merged[key] = copy.deepcopy(value)
    return merged
