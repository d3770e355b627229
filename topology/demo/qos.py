"""A pod's QoS class, requests and pinned CPUs, by the rules Topolens applies to every
mirrored pod: the engine's PodRequests and QoS rule, on the pod as the pod parser
(`topology.parsers.pod`) reads it. The demo states none of them again, so what it emits
is what the mirror reads.
"""

from __future__ import annotations

from typing import Any

from scheduler_api.engine import PodSpec, QoSClass, pod_request
from topology.parsers.pod import containers_pod, parse_pod

from .quantity import CPU


def spec_pod(spec: dict[str, Any]) -> PodSpec:
    """The engine's pod of an emitted pod spec, read by the mirror's parser."""
    manifest = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "demo"}, "spec": spec}
    record = parse_pod(manifest)
    return containers_pod(record.containers, record.init_containers, record.overhead)


def pod_qos_class(spec: dict[str, Any]) -> QoSClass:
    """`GetPodQOS`, as the mirror works it out for a pod without `status.qosClass`."""
    return spec_pod(spec).qos_class


def effective_requests(spec: dict[str, Any]) -> dict[str, int]:
    """The pod's requests in base units (`PodRequests`: max of init and app containers)."""
    return dict(pod_request(spec_pod(spec)))


def exclusive_cpus(pod: PodSpec) -> int:
    """CPUs the kubelet's static policy pins: integer cpu of Guaranteed app containers."""
    if pod.qos_class != QoSClass.GUARANTEED:
        return 0
    cpus = (container.requests.get(CPU, 0) for container in pod.containers)
    return sum(millis // 1000 for millis in cpus if millis % 1000 == 0)
