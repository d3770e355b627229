"""NRTs as NFD's topology-updater publishes them: v1alpha2 (attributes) or v1alpha1."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from scheduler_api.engine import Flavour
from topology.domain.podfingerprint import PodIdentity, fingerprint, scheduler_counts_pod

from .ledger import NodeLedger, ZoneLedger
from .memory_manager import MEMORY_MANAGER_ATTRIBUTE
from .meta import NODES_CREATED, DemoContext
from .nrt_common import NRT_KIND, zone_costs
from .pods import PodDraft
from .quantity import CPU, GPU, HUGEPAGES, MEMORY

NFD_NAMESPACE = "node-feature-discovery"
_ZONE_RESOURCES = (CPU, MEMORY, GPU, *HUGEPAGES)


def pods_fingerprint(pods: list[PodDraft], exclusive_only: bool, nrt_resources: set[str]) -> str:
    """The node's pod-set fingerprint as NFD's topology-updater publishes it
    (`topology.domain.podfingerprint`): every running pod, or with
    `with-exclusive-resources` those scheduler-plugins counts as exclusive."""
    kept = [
        PodIdentity(pod.namespace, pod.name)
        for pod in pods
        if not pod.terminated and (not exclusive_only or _counts(pod, nrt_resources))
    ]
    return fingerprint(kept)


def _counts(pod: PodDraft, nrt_resources: set[str]) -> bool:
    engine = pod.engine_pod()
    return scheduler_counts_pod(
        engine.qos_class, engine.containers, engine.init_containers, nrt_resources
    )


def _resource_names(ledger: NodeLedger) -> set[str]:
    return {name for zone in ledger.zones for name in _ZONE_RESOURCES if name in zone.capacity}


def _resources(zone: ZoneLedger) -> list[dict[str, str]]:
    rows = []
    for name in _ZONE_RESOURCES:
        if name not in zone.capacity:
            continue
        scale = 1000 if name == CPU else 1
        values = (
            zone.capacity[name],
            zone.allocatable[name],
            zone.allocatable[name] - zone.used.get(name, 0),
        )
        rows.append(
            {
                "name": name,
                "capacity": str(values[0] // scale),
                "allocatable": str(values[1] // scale),
                "available": str(values[2] // scale),
            }
        )
    return rows


def _zones(ledger: NodeLedger) -> list[dict[str, Any]]:
    return [
        {
            "name": f"node-{zone.index}",
            "type": "Node",
            "costs": zone_costs(ledger, zone.index, "node-{}"),
            "resources": _resources(zone),
        }
        for zone in ledger.zones
    ]


def render_upstream_nrt(
    ctx: DemoContext, ledger: NodeLedger, pods: list[PodDraft]
) -> dict[str, Any]:
    plan = ledger.plan
    v1alpha2 = plan.flavour == Flavour.UPSTREAM_V1ALPHA2
    owner = {
        "apiVersion": "v1",
        "kind": "Namespace",
        "name": NFD_NAMESPACE,
        "uid": ctx.namespace_uid(NFD_NAMESPACE),
    }
    created = NODES_CREATED + timedelta(days=1, minutes=plan.index)
    meta = ctx.metadata(plan.name, created, owner_references=[owner] if v1alpha2 else None)
    nrt: dict[str, Any] = {
        "apiVersion": f"topology.node.k8s.io/{'v1alpha2' if v1alpha2 else 'v1alpha1'}",
        "kind": NRT_KIND,
        "metadata": meta,
        "topologyPolicies": [plan.topology.nrt_policy],
    }
    if v1alpha2:
        nrt["attributes"] = _attributes(ledger, pods)
    nrt["zones"] = _zones(ledger)
    return nrt


def _attributes(ledger: NodeLedger, pods: list[PodDraft]) -> list[dict[str, str]]:
    topology = ledger.plan.topology
    exclusive_only = ledger.plan.index % 2 == 1
    attributes = [
        {"name": "topologyManagerPolicy", "value": topology.policy.value},
        {"name": "topologyManagerScope", "value": topology.scope.value},
        {
            "name": "nodeTopologyPodsFingerprint",
            "value": pods_fingerprint(pods, exclusive_only, _resource_names(ledger)),
        },
    ]
    if exclusive_only:
        attributes.append(
            {"name": "nodeTopologyPodsFingerprintMethod", "value": "with-exclusive-resources"}
        )
    if ledger.plan.memory_manager:
        attributes.append(dict(MEMORY_MANAGER_ATTRIBUTE))
    return attributes
