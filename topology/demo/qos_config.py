"""The Koordinator `slo-controller-config` ConfigMap (namespace koordinator-system)."""

from __future__ import annotations

import json
from datetime import timedelta
from typing import Any

from .hardware import EPYC_NPS4
from .koordinator_pods import CPU_RECLAIM_PERCENT, MEMORY_RECLAIM_PERCENT
from .meta import NODES_CREATED, DemoContext

NAMESPACE = "koordinator-system"
NAME = "slo-controller-config"


def _resctrl(start: int, end: int, mba: int) -> dict[str, Any]:
    return {
        "enable": True,
        "catRangeStartPercent": start,
        "catRangeEndPercent": end,
        "mbaPercent": mba,
    }


def _class(resctrl: dict[str, Any], group_identity: int, memory: dict[str, Any]) -> dict[str, Any]:
    return {
        "resctrlQOS": resctrl,
        "cpuQOS": {"enable": True, "groupIdentity": group_identity},
        "memoryQOS": {"enable": True} | memory,
    }


def cluster_strategy() -> dict[str, Any]:
    """LSR/LS get the whole L3 and full bandwidth; BE the first 30% of the cache ways."""
    be_class = _class(_resctrl(0, 30, 100), -1, {"wmarkRatio": 95, "wmarkMinAdj": 50})
    be_class["cpuQOS"]["schedIdle"] = 1
    return {
        "lsrClass": _class(_resctrl(0, 100, 100), 2, {"minLimitPercent": 100, "priority": 12}),
        "lsClass": _class(_resctrl(0, 100, 100), 2, {"lowLimitPercent": 20, "wmarkRatio": 95}),
        "beClass": be_class,
    }


def amd_node_strategy() -> dict[str, Any]:
    """EPYC nodes: LS skips the first 10% of ways, BE gets 20% and half the bandwidth."""
    return {
        "name": "amd-epyc-nps4",
        "nodeSelector": {
            "matchLabels": {"node.kubernetes.io/instance-type": EPYC_NPS4.instance_type}
        },
        "lsClass": {"resctrlQOS": _resctrl(10, 100, 100)},
        "beClass": {"resctrlQOS": _resctrl(0, 20, 50)},
    }


def resource_qos_config() -> dict[str, Any]:
    return {"clusterStrategy": cluster_strategy(), "nodeStrategies": [amd_node_strategy()]}


def _colocation_config() -> dict[str, Any]:
    return {
        "enable": True,
        "metricAggregateDurationSeconds": 300,
        "metricReportIntervalSeconds": 60,
        "cpuReclaimThresholdPercent": CPU_RECLAIM_PERCENT,
        "memoryReclaimThresholdPercent": MEMORY_RECLAIM_PERCENT,
        "memoryCalculatePolicy": "usage",
        "degradeTimeMinutes": 15,
        "updateTimeThresholdSeconds": 300,
        "resourceDiffThreshold": 0.1,
    }


def render_slo_controller_config(ctx: DemoContext) -> dict[str, Any]:
    data = {
        "colocation-config": json.dumps(_colocation_config()),
        "resource-threshold-config": json.dumps({"clusterStrategy": {"enable": False}}),
        "resource-qos-config": json.dumps(resource_qos_config()),
        "cpu-burst-config": json.dumps({"clusterStrategy": {"policy": "none"}}),
        "system-config": json.dumps({"clusterStrategy": {"minFreeKbytesFactor": 100}}),
    }
    meta = ctx.metadata(
        NAME,
        NODES_CREATED - timedelta(days=6),
        namespace=NAMESPACE,
        labels={"app.kubernetes.io/name": "koordinator"},
    )
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": meta, "data": data}
