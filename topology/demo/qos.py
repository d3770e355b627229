"""Pod QoS class and effective requests, computed from a pod spec as Kubernetes does."""

from __future__ import annotations

from decimal import Decimal
from enum import StrEnum
from typing import Any

from topology.parsers.quantity import parse_quantity
from topology.parsers.quantity import parse_resource_list as parse_resources

from .quantity import CPU, MEMORY

# Only these count for the QoS class; extended resources (GPUs, batch-cpu) never do.
_QOS_RESOURCES = (CPU, MEMORY)


class QosClass(StrEnum):
    GUARANTEED = "Guaranteed"
    BURSTABLE = "Burstable"
    BEST_EFFORT = "BestEffort"


def _positive_sums(containers: list[dict[str, Any]], kind: str) -> dict[str, Decimal]:
    sums: dict[str, Decimal] = {}
    for container in containers:
        for name, text in (container.get("resources", {}).get(kind) or {}).items():
            value = parse_quantity(text)
            if name in _QOS_RESOURCES and value > 0:
                sums[name] = sums.get(name, Decimal(0)) + value
    return sums


def _limits_everything(container: dict[str, Any]) -> bool:
    limits = container.get("resources", {}).get("limits") or {}
    return all(name in limits and parse_quantity(limits[name]) > 0 for name in _QOS_RESOURCES)


def pod_qos_class(spec: dict[str, Any]) -> QosClass:
    """`GetPodQOS`: sums over init and app containers, zero quantities ignored."""
    containers = spec.get("initContainers", []) + spec.get("containers", [])
    requests = _positive_sums(containers, "requests")
    limits = _positive_sums(containers, "limits")
    if not requests and not limits:
        return QosClass.BEST_EFFORT
    guaranteed = all(_limits_everything(container) for container in containers)
    if guaranteed and requests == limits:
        return QosClass.GUARANTEED
    return QosClass.BURSTABLE


def effective_requests(spec: dict[str, Any]) -> dict[str, int]:
    """max(sum over app containers, max over init containers), per resource, in base units."""
    total: dict[str, int] = {}
    for container in spec.get("containers", []):
        for name, value in parse_resources(container.get("resources", {}).get("requests")).items():
            total[name] = total.get(name, 0) + value
    for container in spec.get("initContainers", []):
        for name, value in parse_resources(container.get("resources", {}).get("requests")).items():
            total[name] = max(total.get(name, 0), value)
    return total


def exclusive_cpus(spec: dict[str, Any], qos: QosClass) -> int:
    """CPUs the kubelet's static policy pins: integer cpu of Guaranteed app containers."""
    if qos != QosClass.GUARANTEED:
        return 0
    pinned = 0
    for container in spec.get("containers", []):
        millis = parse_resources(container.get("resources", {}).get("requests")).get(CPU, 0)
        if millis % 1000 == 0:
            pinned += millis // 1000
    return pinned
