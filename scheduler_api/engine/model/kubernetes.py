"""Kubernetes rules every family shares, each stated once: what a pod requests
(resourceapi.PodRequests, pkg/api/v1/resource), and the node-level filters every
scheduler runs before its topology plugin (NodeUnschedulable, NodeResourcesFit, from
kube-scheduler's pkg/scheduler/framework/plugins).

Pod-level resources (spec.resources, KEP-2837) follow kubernetes
staging/src/k8s.io/component-helpers/resource/helpers.go (stored master after v1.35,
commit 0085214): `PodRequests` takes the containers' aggregate, then puts the pod's own
request in place of it for each resource set at pod level that the feature supports
(cpu, memory, hugepages-*), then adds the overhead. NodeResourcesFit passes
`SkipPodLevelResources: !EnablePodLevelResources` (pkg/scheduler/framework/plugins/
noderesources/fit.go), so whether a scheduler honours them is its own build's feature
gate: `pod_level=False` is the aggregate of containers, as a scheduler that does not.

Fast paths that count or vectorise these (`schedulerplugins.fast.vector.node_fit`,
`schedulerplugins.fast.count_vector.node_fit_counts`) name them as their reference.
"""

from __future__ import annotations

from collections.abc import Mapping

from scheduler_api.engine.model.results import CORDONED, QuantityFormat, Reason, short_on_node
from scheduler_api.engine.model.snapshot import ContainerSpec, NodeSnapshot, PodSpec

BINARY_BY_DEFAULT = ("memory", "hugepages-", "ephemeral-storage")


def default_format(name: str) -> QuantityFormat:
    binary = name.startswith(BINARY_BY_DEFAULT)
    return QuantityFormat.BINARY_SI if binary else QuantityFormat.DECIMAL_SI


def add(a: Mapping[str, int], b: Mapping[str, int]) -> dict[str, int]:
    """quotav1.Add: the union of keys, summed."""
    out = dict(a)
    for name, amount in b.items():
        out[name] = out.get(name, 0) + amount
    return out


HUGEPAGES_PREFIX = "hugepages-"
POD_LEVEL_RESOURCES = frozenset({"cpu", "memory"})  # and every hugepages-<size>


def is_supported_pod_level_resource(name: str) -> bool:
    """IsSupportedPodLevelResource: cpu, memory and hugepages-<size>."""
    return name in POD_LEVEL_RESOURCES or name.startswith(HUGEPAGES_PREFIX)


def pod_level_requests_set(pod: PodSpec) -> bool:
    """IsPodLevelRequestsSet: spec.resources.requests names a supported resource."""
    return any(map(is_supported_pod_level_resource, pod.pod_level_requests))


def pod_level_resources_set(pod: PodSpec) -> bool:
    """IsPodLevelResourcesSet: spec.resources names a supported resource in its
    requests or its limits (what the kubelet's resource managers test)."""
    names = (*pod.pod_level_requests, *pod.pod_level_limits)
    return any(map(is_supported_pod_level_resource, names))


def pod_requests(
    pod: PodSpec, *, pod_level: bool = True
) -> tuple[dict[str, int], dict[str, QuantityFormat]]:
    """resourceapi.PodRequests (sidecars, largest init, pod-level, overhead) and each
    sum's Format.

    `pod_level=False` is `SkipPodLevelResources`: the containers' aggregate even when
    spec.resources is set (a scheduler built without the feature, or with it off).
    A sum keeps the Format of its first non-zero term, as Quantity.Add does; a larger
    init container replaces the sum with a copy of its own quantity.
    """
    reqs, formats = aggregate_container_requests(pod)
    if pod_level and pod_level_requests_set(pod):
        for name, amount in pod.pod_level_requests.items():
            if is_supported_pod_level_resource(name):
                reqs[name], formats[name] = amount, default_format(name)
    for name, amount in pod.overhead.items():
        formats.setdefault(name, default_format(name))
        reqs[name] = reqs.get(name, 0) + amount
    return reqs, formats


def aggregate_container_requests(
    pod: PodSpec,
) -> tuple[dict[str, int], dict[str, QuantityFormat]]:
    """AggregateContainerRequests: the containers' sum, sidecars added, the largest
    init container (with the sidecars before it) as a floor; no overhead."""
    reqs: dict[str, int] = {}
    formats: dict[str, QuantityFormat] = {}

    def fmt(container: ContainerSpec, name: str) -> QuantityFormat:
        return container.quantity_formats.get(name, default_format(name))

    def add_into(container: ContainerSpec) -> None:
        for name, amount in container.requests.items():
            if reqs.get(name, 0) == 0:
                formats[name] = fmt(container, name)
            reqs[name] = reqs.get(name, 0) + amount

    for container in pod.containers:
        add_into(container)
    sidecars: dict[str, int] = {}
    init_max: dict[str, tuple[int, QuantityFormat]] = {}
    for container in pod.init_containers:
        if container.restart_policy == "Always":
            add_into(container)
            sidecars = add(sidecars, container.requests)
            effective = dict(sidecars)
        else:
            effective = add(container.requests, sidecars)
        for name, amount in effective.items():
            if name not in init_max or amount > init_max[name][0]:
                init_max[name] = (amount, fmt(container, name))
    for name, (amount, init_fmt) in init_max.items():
        if name not in reqs or amount > reqs[name]:
            reqs[name], formats[name] = amount, init_fmt
    return reqs, formats


def pod_request(pod: PodSpec, *, pod_level: bool = True) -> dict[str, int]:
    """What NodeResourcesFit counts for the pod (sidecars, largest init, pod-level
    requests unless `pod_level=False`, overhead)."""
    return pod_requests(pod, pod_level=pod_level)[0]


def node_fit_reasons(node: NodeSnapshot, request: Mapping[str, int]) -> tuple[Reason, ...]:
    """NodeUnschedulable and NodeResourcesFit: the filters before any topology plugin."""
    if node.unschedulable:
        return (CORDONED,)
    reasons = []
    if "pods" in node.allocatable:
        free_pods = node.allocatable["pods"] - node.requested.get("pods", 0)
        if free_pods < 1:
            reasons.append(short_on_node("pods", 1 - free_pods))
    for resource in sorted(request):
        wanted = request[resource]
        if wanted <= 0 or resource == "pods":
            continue
        free = node.allocatable.get(resource, 0) - node.requested.get(resource, 0)
        if wanted > free:
            reasons.append(short_on_node(resource, wanted - max(free, 0)))
    return tuple(reasons)


def _copies(room: int, step: int) -> int:
    """How many k >= 0 have k * step <= room."""
    return room // step + 1 if room >= 0 else 0


def node_fit_count(node: NodeSnapshot, request: Mapping[str, int], limit: int) -> int:
    """How many copies pass the shared filters as each one adds its request (at most `limit`).

    The closed form of calling `node_fit_reasons` after each assumed copy: every copy
    adds `request` and one pod to the node's requested amounts.
    """
    if node.unschedulable:
        return 0
    count = limit
    if "pods" in node.allocatable:
        room = node.allocatable["pods"] - node.requested.get("pods", 0) - 1
        count = min(count, _copies(room, request.get("pods", 0) + 1))
    for resource, wanted in request.items():
        if wanted > 0 and resource != "pods":
            room = node.allocatable.get(resource, 0) - node.requested.get(resource, 0) - wanted
            count = min(count, _copies(room, wanted))
    return max(count, 0)
