"""Two koordlets listing one pod (one of them stale) never break an import or a sync."""

from __future__ import annotations

import copy

import pytest
from django.utils import timezone

from tests.topology.helpers import sample_items
from topology.choices import AllocationSource
from topology.models import Cluster, PodAllocation
from topology.parsers.nrt import parse_nrt
from topology.services.mirror.importer import import_objects
from topology.services.mirror.writers import upsert_topology

pytestmark = pytest.mark.django_db
ALLOCS = "node.koordinator.sh/pod-cpu-allocs"
POD = ("ml", "inference-hd6fpwhrnw-ltdkd")  # pinned by kubelet on worker-03


def nrt_of(items: list[dict], node: str) -> dict:
    return next(
        i for i in items if i["kind"] == "NodeResourceTopology" and i["metadata"]["name"] == node
    )


def with_claim_copied(items: list[dict], to_node: str) -> list[dict]:
    """worker-03's pod-cpu-allocs copied onto another Koordinator node's NRT."""
    items = copy.deepcopy(items)
    claim = nrt_of(items, "worker-03")["metadata"]["annotations"][ALLOCS]
    nrt_of(items, to_node)["metadata"]["annotations"][ALLOCS] = claim
    return items


def kubelet_claims() -> list[tuple[str, str, str, bool]]:
    rows = PodAllocation.objects.filter(source=AllocationSource.KUBELET)
    return [
        (r.node_name, r.namespace, r.pod_name, r.pod_id is not None) for r in rows.order_by("pk")
    ]


def test_two_nrts_claiming_one_pod_in_one_import_keep_the_pods_own_node():
    summary = import_objects(
        cluster_name="c", objects=with_claim_copied(sample_items("cluster-small.json"), "worker-06")
    )
    assert summary.ok, summary.errors
    assert kubelet_claims() == [("worker-03", *POD, True)]


def test_a_stale_claim_arriving_later_does_not_displace_the_pods_own_node():
    items = sample_items("cluster-small.json")
    assert import_objects(cluster_name="c", objects=items).ok
    stale = nrt_of(with_claim_copied(items, "worker-06"), "worker-06")
    stale["metadata"]["resourceVersion"] = "999999"
    upsert_topology(Cluster.objects.get(name="c"), parse_nrt(stale), timezone.now())
    assert kubelet_claims() == [("worker-03", *POD, True)]


def test_the_pods_own_node_takes_over_a_claim_another_node_held():
    items = sample_items("cluster-small.json")
    moved = with_claim_copied(items, "worker-06")
    del nrt_of(moved, "worker-03")["metadata"]["annotations"][ALLOCS]
    assert import_objects(cluster_name="c", objects=moved).ok
    assert [claim[:3] for claim in kubelet_claims()] == [("worker-06", *POD)]
    upsert_topology(
        Cluster.objects.get(name="c"), parse_nrt(nrt_of(items, "worker-03")), timezone.now()
    )
    assert kubelet_claims() == [("worker-03", *POD, True)]
