"""DRA ResourceSlices and ResourceClaims in the live sync, through an in-process stand-in
for the cluster client (no network): mirrored when served, "not served" when the cluster
lacks resource.k8s.io or answers its list with 404, and never a failed sync."""

from __future__ import annotations

import copy
from typing import Any

import pytest
from kubernetes.client.exceptions import ApiException

from tests.topology.dra_objects import gpu, resource_claim, resource_slice, standard_numa
from topology.choices import ConnectionMode, SyncResource
from topology.models import (
    Cluster,
    ClusterConnection,
    ResourceClaim,
    ResourceSlice,
    ResourceSliceDevice,
    SyncState,
)
from topology.sync.client import APIGroup, ClusterClient, Credentials, Page
from topology.sync.report import SyncReport
from topology.sync.resources import Resource
from topology.sync.session import NOT_SERVED_ON_LIST, ClusterSync
from topology.sync.settings import SyncSettings

pytestmark = pytest.mark.django_db
DRA_GROUP = APIGroup("resource.k8s.io", ("v1", "v1beta2"), "v1")


class InProcessClient:
    """Answers what `ClusterSync.run_once` asks of a ClusterClient, from memory."""

    def __init__(
        self,
        items: dict[str, list[dict[str, Any]]],
        groups: tuple[APIGroup, ...] = (DRA_GROUP,),
        gone: frozenset[str] = frozenset(),
    ) -> None:
        self.items = items
        self.groups = groups
        self.gone = gone
        self.listed: list[str] = []

    def core_versions(self) -> list[str]:
        return ["v1"]

    def api_groups(self) -> list[APIGroup]:
        return list(self.groups)

    def resource_names(self, group: str, version: str) -> set[str]:
        return {"resourceslices", "resourceclaims"} if group == DRA_GROUP.name else set()

    def list_page(self, resource: Resource, *, limit: int | None, continue_token: str = "") -> Page:
        self.listed.append(f"{resource.api_version}/{resource.plural}")
        if resource.plural in self.gone:
            raise ApiException(status=404, reason="Not Found")
        return Page(copy.deepcopy(self.items.get(resource.plural, [])), "100", "")

    def interrupt_watches(self) -> None:
        pass

    def close(self) -> None:
        pass


@pytest.fixture
def cluster() -> Cluster:
    cluster = Cluster.objects.create(name="dra")
    ClusterConnection.objects.create(
        cluster=cluster, mode=ConnectionMode.KUBECONFIG, kubeconfig_path="/nowhere"
    )
    return cluster


def sync_with(
    client: InProcessClient, cluster: Cluster, monkeypatch: pytest.MonkeyPatch
) -> SyncReport:
    monkeypatch.setattr(ClusterClient, "connect", classmethod(lambda cls, *args: client))
    settings = SyncSettings.load(page_size=20, list_attempts=2, backoff_initial=0.01)
    credentials = Credentials(ConnectionMode.KUBECONFIG, "/nowhere")
    return ClusterSync(cluster, credentials, settings).run_once()


DRA_ITEMS = {
    "resourceslices": [resource_slice("s1", [gpu("gpu-0", standard_numa(0)), gpu("gpu-1")])],
    "resourceclaims": [resource_claim("train", ["gpu-0"])],
}


def test_served_dra_collections_are_listed_at_v1_and_mirrored(cluster, monkeypatch) -> None:
    client = InProcessClient(DRA_ITEMS)
    report = sync_with(client, cluster, monkeypatch)
    assert report.ok, report.as_dict()
    assert "resource.k8s.io/v1/resourceslices" in client.listed
    assert "resource.k8s.io/v1beta2/resourceslices" not in client.listed
    assert dict(ResourceSliceDevice.objects.values_list("name", "numa_node")) == {
        "gpu-0": 0,
        "gpu-1": None,
    }
    assert ResourceClaim.objects.get().devices.get().device == "gpu-0"
    state = SyncState.objects.get(cluster=cluster, resource=SyncResource.RESOURCE_SLICES)
    assert state.served and state.api_version == "resource.k8s.io/v1"


def test_a_slice_gone_at_the_next_list_is_removed(cluster, monkeypatch) -> None:
    sync_with(InProcessClient(DRA_ITEMS), cluster, monkeypatch)
    fewer = {**DRA_ITEMS, "resourceslices": []}
    report = sync_with(InProcessClient(fewer), cluster, monkeypatch)
    assert report.counts[SyncResource.RESOURCE_SLICES]["removed"] == 1
    assert not ResourceSlice.objects.exists() and not ResourceSliceDevice.objects.exists()


def test_a_cluster_without_the_dra_api_skips_it_as_not_served(cluster, monkeypatch) -> None:
    client = InProcessClient(DRA_ITEMS, groups=())
    report = sync_with(client, cluster, monkeypatch)
    assert report.ok
    for resource in (SyncResource.RESOURCE_SLICES, SyncResource.RESOURCE_CLAIMS):
        assert report.not_served[resource] == "group resource.k8s.io is not served"
        state = SyncState.objects.get(cluster=cluster, resource=resource)
        assert not state.served and state.consecutive_errors == 0
    assert not any("resource.k8s.io" in path for path in client.listed)


def test_a_404_on_the_list_records_the_collection_as_not_served(cluster, monkeypatch) -> None:
    client = InProcessClient(DRA_ITEMS, gone=frozenset({"resourceslices"}))
    report = sync_with(client, cluster, monkeypatch)
    assert report.ok, report.as_dict()
    assert report.not_served[SyncResource.RESOURCE_SLICES] == NOT_SERVED_ON_LIST
    state = SyncState.objects.get(cluster=cluster, resource=SyncResource.RESOURCE_SLICES)
    assert not state.served and state.skipped_reason == NOT_SERVED_ON_LIST
    assert state.consecutive_errors == 0
    # the other collection of the group is still synced
    assert ResourceClaim.objects.filter(cluster=cluster).count() == 1


def test_a_malformed_slice_is_a_sync_error_and_the_others_are_written(cluster, monkeypatch) -> None:
    broken = resource_slice("broken", [{"attributes": {}}])
    items = {**DRA_ITEMS, "resourceslices": [*DRA_ITEMS["resourceslices"], broken]}
    report = sync_with(InProcessClient(items), cluster, monkeypatch)
    assert report.counts[SyncResource.RESOURCE_SLICES]["errors"] == 1
    error = cluster.sync_errors.get()
    assert (error.object_name, error.field) == ("broken", "spec.devices[0].name")
    assert list(ResourceSlice.objects.values_list("name", flat=True)) == ["s1"]
