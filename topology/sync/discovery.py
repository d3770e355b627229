"""Which collections a cluster serves, and at which version Topolens reads each.

A CRD serving several versions serves the same objects in each, so reading two
versions of one group would mirror every object twice. Per group, the sync reads the
version discovery marks preferred (as kubectl does, so a synced mirror equals one
imported from `kubectl get` dumps), or else the newest served version the parsers read.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from topology.choices import SyncResource
from topology.sync.client import APIGroup, ClusterClient
from topology.sync.resources import (
    CORE_RESOURCES,
    GROUP_RESOURCES,
    Resource,
    in_sync_order,
    scheduler_config_resource,
)


@dataclass
class SyncPlan:
    """What to list and watch, and why the rest is skipped."""

    resources: list[Resource] = field(default_factory=list)
    skipped: dict[SyncResource, str] = field(default_factory=dict)


def discover(client: ClusterClient, *, scheduler_configmap: str = "") -> SyncPlan:
    """Ask the server; a group or resource it does not serve is skipped, not an error.

    `scheduler_configmap` (namespace/name), when the cluster's connection names one: the
    ConfigMap of its scheduler configuration is synced too; otherwise it is skipped."""
    plan = SyncPlan()
    if "v1" not in client.core_versions():
        raise RuntimeError("the API server does not serve core/v1")
    plan.resources += CORE_RESOURCES
    if scheduler_configmap:
        plan.resources.append(scheduler_config_resource(scheduler_configmap))
    else:
        plan.skipped[SyncResource.SCHEDULER_CONFIG] = (
            "no scheduler ConfigMap is named in the cluster's connection"
        )
    groups = {group.name: group for group in client.api_groups()}
    for wanted in GROUP_RESOURCES:
        group = groups.get(wanted.group)
        if group is None:
            plan.skipped[wanted.sync] = f"group {wanted.group} is not served"
            continue
        version = _version_to_read(client, wanted, group)
        if version is None:
            served = ", ".join(group.versions)
            plan.skipped[wanted.sync] = (
                f"{wanted.plural}.{wanted.group} is not served in a version Topolens reads "
                f"(served: {served}; readable: {', '.join(wanted.readable_versions)})"
            )
            continue
        plan.resources.append(wanted.at(version))
    plan.resources = in_sync_order(plan.resources)
    return plan


def _version_to_read(client: ClusterClient, wanted: Resource, group: APIGroup) -> str | None:
    candidates = [v for v in group.versions if v in wanted.readable_versions]
    candidates.sort(key=lambda v: (v != group.preferred, wanted.readable_versions.index(v)))
    for version in candidates:
        if wanted.plural in client.resource_names(wanted.group, version):
            return version
    return None
