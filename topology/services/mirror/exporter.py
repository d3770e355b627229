"""Write a cluster's mirror back out as Kubernetes objects (a v1 List).

Nodes, pods and the QoS ConfigMap are rebuilt from the models (so the export
shows exactly what the mirror holds); NRTs and Reservations are stored whole
and written as stored. Importing the result gives an equal mirror.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

from topology.models import Cluster, Node, Pod, QoSConfig
from topology.parsers.qos_config import RESOURCE_QOS_KEY, ResctrlRecord, render_resctrl
from topology.parsers.quantity import format_resource_list


def export_objects(cluster: Cluster) -> Iterator[dict[str, Any]]:
    """Yield the mirror's objects one by one, so a large cluster streams."""
    for node in Node.objects.filter(cluster=cluster).order_by("name").iterator(chunk_size=500):
        yield node_object(node)
    topologies = cluster.nodes.filter(topology__isnull=False).select_related("topology")
    for node in topologies.order_by("name").iterator(chunk_size=200):
        yield node.topology.raw
    for pod in Pod.objects.filter(cluster=cluster).order_by("namespace", "name").iterator(1000):
        yield pod_object(pod)
    for reservation in cluster.reservations.order_by("name").iterator(chunk_size=500):
        yield reservation.raw
    config = QoSConfig.objects.filter(cluster=cluster).first()
    if config is not None:
        yield qos_configmap_object(config)


def export_list(cluster: Cluster) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "List", "items": list(export_objects(cluster))}


STREAM_CHUNK_CHARS = 64 * 1024  # one chunk per object would be one socket write per object


def stream_list_json(cluster: Cluster) -> Iterator[str]:
    """The List as JSON text in chunks of about 64 KiB, never holding the whole document."""
    parts = ['{"apiVersion": "v1", "kind": "List", "items": [']
    size = len(parts[0])
    for index, obj in enumerate(export_objects(cluster)):
        text = ("," if index else "") + "\n" + json.dumps(obj)
        parts.append(text)
        size += len(text)
        if size >= STREAM_CHUNK_CHARS:
            yield "".join(parts)
            parts, size = [], 0
    parts.append("\n]}\n")
    yield "".join(parts)


def _metadata(obj: Any, **extra: Any) -> dict[str, Any]:
    metadata: dict[str, Any] = {"name": obj.name, **extra}
    if obj.uid:
        metadata["uid"] = obj.uid
    if obj.resource_version:
        metadata["resourceVersion"] = obj.resource_version
    return metadata


def node_object(node: Node) -> dict[str, Any]:
    spec = {"unschedulable": True} if node.unschedulable else {}
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": _metadata(node, labels=node.labels, annotations=node.annotations),
        "spec": spec,
        "status": {
            "capacity": format_resource_list(node.capacity),
            "allocatable": format_resource_list(node.allocatable),
        },
    }


def _container(data: dict[str, Any]) -> dict[str, Any]:
    resources = {
        key: format_resource_list(data[key]) for key in ("requests", "limits") if data.get(key)
    }
    container = {"name": data["name"], "resources": resources}
    if data.get("restart_policy"):
        container["restartPolicy"] = data["restart_policy"]
    return container


def pod_object(pod: Pod) -> dict[str, Any]:
    metadata = _metadata(
        pod,
        namespace=pod.namespace,
        labels=pod.labels,
        annotations=pod.annotations,
        ownerReferences=pod.owner_references,
    )
    spec: dict[str, Any] = {
        "nodeName": pod.node_name,
        "schedulerName": pod.scheduler_name,
        "containers": [_container(c) for c in pod.containers],
    }
    if pod.init_containers:
        spec["initContainers"] = [_container(c) for c in pod.init_containers]
    if pod.priority is not None:
        spec["priority"] = pod.priority
    if pod.overhead:
        spec["overhead"] = format_resource_list(pod.overhead)
    if pod.resources:
        spec["resources"] = {
            kind: format_resource_list(amounts) for kind, amounts in pod.resources.items()
        }
    if pod.created_at is not None:
        metadata["creationTimestamp"] = pod.created_at.isoformat().replace("+00:00", "Z")
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": metadata,
        "spec": spec,
        "status": {"phase": pod.phase, "qosClass": pod.qos_class, **status_fields(pod.status)},
    }


def status_fields(status: dict[str, Any]) -> dict[str, Any]:
    """The pod status fields Topolens keeps (`parsers.pod.status_of`), as the API has them."""
    fields: dict[str, Any] = {k: status[k] for k in ("reason", "message") if status.get(k)}
    if status.get("scheduled"):
        fields["conditions"] = [{"type": "PodScheduled", **status["scheduled"]}]
    containers = [_container_status(c) for c in status.get("containers", [])]
    if containers:
        fields["containerStatuses"] = containers
    return fields


def _container_status(state: dict[str, Any]) -> dict[str, Any]:
    """`state`/`last` kept as "waiting: Reason" come back as {"waiting": {"reason": ...}}."""
    item: dict[str, Any] = {"name": state["name"], "restartCount": state.get("restarts", 0)}
    for label, key in (("state", "state"), ("last", "lastState")):
        if state.get(label):
            kind, _, reason = state[label].partition(": ")
            item[key] = {kind: {"reason": reason}}
    return item


def render_resource_qos(config: QoSConfig) -> dict[str, Any]:
    """resource-qos-config from the typed rows plus every verbatim field."""
    result: dict[str, Any] = {}
    node_strategies = []
    for strategy in config.strategies.prefetch_related("resctrl"):
        body: dict[str, Any] = {}
        if not strategy.is_cluster_strategy:
            body["name"] = strategy.name
            if strategy.node_selector is not None:
                body["nodeSelector"] = strategy.node_selector
        body.update(json.loads(json.dumps(strategy.body)))
        for setting in strategy.resctrl.all():
            record = ResctrlRecord(
                qos_class=setting.qos_class,
                enable=setting.enable,
                cat_range_start_percent=setting.cat_range_start_percent,
                cat_range_end_percent=setting.cat_range_end_percent,
                mba_percent=setting.mba_percent,
                extra=setting.extra,
            )
            body.setdefault(setting.qos_class, {})["resctrlQOS"] = render_resctrl(record)
        if strategy.is_cluster_strategy:
            result["clusterStrategy"] = body
        else:
            node_strategies.append(body)
    if node_strategies:
        result["nodeStrategies"] = node_strategies
    return result


def qos_configmap_object(config: QoSConfig) -> dict[str, Any]:
    data = dict(config.data)
    data[RESOURCE_QOS_KEY] = json.dumps(render_resource_qos(config))
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": _metadata(config, namespace=config.namespace),
        "data": data,
    }
