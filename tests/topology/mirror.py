"""A cluster's whole mirror as plain data, for equality checks in tests."""

from __future__ import annotations

from typing import Any

from django.forms.models import model_to_dict

from topology.models import (
    Cluster,
    Node,
    NodeCPUReservation,
    NodeTopology,
    Pod,
    PodAllocation,
    QoSStrategy,
    ResctrlSetting,
    Reservation,
    ZoneResource,
)

_SKIP = {"id", "observed_at", "cluster", "node", "pod", "topology", "zone", "config", "strategy"}


def _row(obj: Any) -> dict[str, Any]:
    data = model_to_dict(obj)
    if "cpu_table" in data:
        data["cpu_table"] = bytes(data["cpu_table"])
    return {k: v for k, v in data.items() if k not in _SKIP}


def _sorted(rows: Any) -> list[Any]:
    return sorted(rows, key=repr)


def mirror_state(cluster: Cluster) -> dict[str, Any]:
    return {
        "nodes": _sorted((n.name, _row(n)) for n in Node.objects.filter(cluster=cluster)),
        "topologies": _sorted(
            (t.node.name, _row(t))
            for t in NodeTopology.objects.filter(node__cluster=cluster).select_related("node")
        ),
        "zone_resources": _sorted(
            (r.zone.topology.node.name, r.zone.name, r.name, r.capacity, r.allocatable, r.available)
            for r in ZoneResource.objects.filter(
                zone__topology__node__cluster=cluster
            ).select_related("zone__topology__node")
        ),
        "reservations_node": _sorted(
            (r.node.name, _row(r)) for r in NodeCPUReservation.objects.filter(node__cluster=cluster)
        ),
        "pods": _sorted(
            ((p.namespace, p.name), _row(p)) for p in Pod.objects.filter(cluster=cluster)
        ),
        "allocations": _sorted(
            (
                a.namespace,
                a.pod_name,
                a.source,
                a.cpuset,
                str(a.numa_resources),
                a.node_id is not None,
            )
            for a in PodAllocation.objects.filter(cluster=cluster)
        ),
        "reservations": _sorted(
            (r.name, _row(r)) for r in Reservation.objects.filter(cluster=cluster)
        ),
        "qos": _sorted(
            (s.position, s.name, str(s.node_selector), str(s.body))
            for s in QoSStrategy.objects.filter(config__cluster=cluster)
        ),
        "resctrl": _sorted(
            (r.strategy.position, r.qos_class, _row(r))
            for r in ResctrlSetting.objects.filter(strategy__config__cluster=cluster)
        ),
    }
