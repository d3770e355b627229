"""Checks not tied to an NRT flavour: metadata, namespaces, QoS classes, node requests,
and the slo-controller-config ConfigMap."""

from __future__ import annotations

import json

from topology.demo.qos import pod_qos_class

from .check_index import ClusterIndex, Obj, allocated_from, label, pod_requests, resources

_REQUIRED_META = ("name", "uid", "resourceVersion", "creationTimestamp")
_NAMESPACED = ("Pod", "ConfigMap")
KOORDINATOR_QOS = ("LSE", "LSR", "LS", "BE", "SYSTEM")


def check_metadata(objects: list[Obj]) -> list[str]:
    problems = []
    uids: dict[str, str] = {}
    keys: set[tuple[str, str, str]] = set()
    for obj in objects:
        meta = obj.get("metadata", {})
        who = label(obj)
        problems += [
            f"{who}: metadata.{key} is missing" for key in _REQUIRED_META if not meta.get(key)
        ]
        if obj.get("kind") in _NAMESPACED and not meta.get("namespace"):
            problems.append(f"{who}: a namespaced object without namespace")
        if (other := uids.setdefault(meta.get("uid", ""), who)) != who:
            problems.append(f"{who}: uid also used by {other}")
        key = (obj.get("kind", ""), meta.get("namespace", ""), meta.get("name", ""))
        if key in keys:
            problems.append(f"{who}: listed twice")
        keys.add(key)
    return problems


def check_namespaces(index: ClusterIndex, objects: list[Obj]) -> list[str]:
    problems = []
    for obj in objects:
        namespace = obj.get("metadata", {}).get("namespace")
        if namespace and namespace not in index.namespaces:
            problems.append(f"{label(obj)}: namespace {namespace} has no Namespace object")
    return problems


def check_pods(index: ClusterIndex) -> list[str]:
    problems = []
    for pod in index.pods_by_uid.values():
        who = label(pod)
        published = pod.get("status", {}).get("qosClass")
        if published != pod_qos_class(pod.get("spec", {})).value:
            problems.append(f"{who}: qosClass {published} does not follow from its resources")
        node = pod.get("spec", {}).get("nodeName")
        pending = pod.get("status", {}).get("phase") == "Pending"
        if node not in index.nodes and not (node is None and pending):
            problems.append(f"{who}: bound to unknown node")
        problems += _check_limits(who, pod.get("spec", {}))
        koordinator_qos = pod["metadata"].get("labels", {}).get("koordinator.sh/qosClass")
        if koordinator_qos is not None and koordinator_qos not in KOORDINATOR_QOS:
            problems.append(f"{who}: unknown Koordinator QoS class {koordinator_qos}")
    return problems


def _check_limits(who: str, spec: Obj) -> list[str]:
    """The API server's rule: a limit is never below its request."""
    problems = []
    for container in spec.get("initContainers", []) + spec.get("containers", []):
        requests = resources(container.get("resources", {}).get("requests"))
        limits = resources(container.get("resources", {}).get("limits"))
        for name, limit in limits.items():
            if limit < requests.get(name, 0):
                problems.append(
                    f"{who}: container {container.get('name')} limits {name} below its request"
                )
    return problems


def check_node_requests(index: ClusterIndex, node: Obj) -> list[str]:
    """Running pods plus Available Reservations fit in the node's allocatable.

    A pod allocated from an Available Reservation is inside it, so it is not counted twice.
    """
    name = node["metadata"]["name"]
    total: dict[str, int] = {}
    demands = [
        pod_requests(pod) for pod in index.active_pods(name) if allocated_from(pod, index) is None
    ]
    demands += [
        resources(resv["status"].get("allocatable")) for resv in index.node_reservations(name)
    ]
    for demand in demands:
        for resource, amount in demand.items():
            total[resource] = total.get(resource, 0) + amount
    allocatable = resources(node.get("status", {}).get("allocatable"))
    total["pods"] = len(index.active_pods(name))
    return [
        f"Node {name}: pods request {amount} {resource}, allocatable {allocatable.get(resource, 0)}"
        for resource, amount in sorted(total.items())
        if amount > allocatable.get(resource, 0)
    ]


def check_qos_config(index: ClusterIndex) -> list[str]:
    config = next(
        (cm for cm in index.config_maps if cm["metadata"]["name"] == "slo-controller-config"),
        None,
    )
    if config is None or config["metadata"].get("namespace") != "koordinator-system":
        return ["ConfigMap koordinator-system/slo-controller-config is missing"]
    strategy = json.loads(config.get("data", {})["resource-qos-config"])
    problems = _check_resctrl("clusterStrategy", strategy.get("clusterStrategy", {}))
    for node_strategy in strategy.get("nodeStrategies", []):
        wanted = node_strategy.get("nodeSelector", {}).get("matchLabels", {})
        if not any(_matches(node, wanted) for node in index.nodes.values()):
            problems.append(
                f"resource-qos-config: node strategy {node_strategy.get('name')} selects no node"
            )
        problems += _check_resctrl(f"nodeStrategies[{node_strategy.get('name')}]", node_strategy)
    return problems


def _matches(node: Obj, wanted: dict[str, str]) -> bool:
    labels = node["metadata"].get("labels", {})
    return all(labels.get(key) == value for key, value in wanted.items())


def _check_resctrl(where: str, strategy: Obj) -> list[str]:
    problems = []
    for qos_class in ("lsrClass", "lsClass", "beClass", "systemClass"):
        resctrl = strategy.get(qos_class, {}).get("resctrlQOS")
        if not resctrl:
            continue
        start, end = resctrl.get("catRangeStartPercent", 0), resctrl.get("catRangeEndPercent", 100)
        if not 0 <= start < end <= 100 or not 0 < resctrl.get("mbaPercent", 100) <= 100:
            problems.append(
                f"resource-qos-config {where}.{qos_class}: resctrl percentages out of range"
            )
    return problems
