"""data_synced_at: how far the mirror is known equal to the cluster."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from topology.choices import SyncResource
from topology.models import Cluster, SyncState
from topology.sync.freshness import data_synced_at

pytestmark = pytest.mark.django_db


def test_a_cluster_never_synced_has_no_sync_time():
    cluster = Cluster.objects.create(name="imported-only", last_imported_at=timezone.now())
    assert data_synced_at(cluster) is None


def test_a_served_collection_never_listed_means_not_synced():
    cluster = Cluster.objects.create(name="c")
    SyncState.objects.create(
        cluster=cluster, resource=SyncResource.NODES, synced_through=timezone.now()
    )
    SyncState.objects.create(cluster=cluster, resource=SyncResource.PODS)
    assert data_synced_at(cluster) is None


def test_the_stalest_served_collection_sets_the_age_and_unserved_ones_do_not_count():
    cluster = Cluster.objects.create(name="c")
    now = timezone.now()
    SyncState.objects.create(cluster=cluster, resource=SyncResource.NODES, synced_through=now)
    SyncState.objects.create(
        cluster=cluster, resource=SyncResource.PODS, synced_through=now - timedelta(seconds=40)
    )
    SyncState.objects.create(cluster=cluster, resource=SyncResource.NRT_CRANE, served=False)
    assert data_synced_at(cluster) == now - timedelta(seconds=40)
