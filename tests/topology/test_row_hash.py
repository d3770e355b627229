"""Each pod and allocation row carries its hash, kept by PostgreSQL as the row is written."""

from __future__ import annotations

import pytest
from django.db import connection

from topology.demo import generate_demo_objects
from topology.models import Pod, PodAllocation
from topology.services.mirror.importer import import_objects

pytestmark = [
    pytest.mark.django_db,
    pytest.mark.skipif(connection.vendor != "postgresql", reason="row hashes need PostgreSQL"),
]


@pytest.fixture
def imported() -> None:
    objects = generate_demo_objects(nodes=6, seed=5, cluster="hashes")
    assert import_objects(cluster_name="hashes", objects=objects).ok


def test_rows_written_by_the_importer_carry_distinct_hashes(imported) -> None:
    hashes = list(Pod.objects.values_list("row_hash", flat=True))
    assert len(hashes) > 1 and 0 not in hashes
    assert len(set(hashes)) == len(hashes)
    assert 0 not in PodAllocation.objects.values_list("row_hash", flat=True)


def test_a_changed_row_gets_a_new_hash_from_the_database(imported) -> None:
    pod = Pod.objects.order_by("pk").first()
    allocation = PodAllocation.objects.order_by("pk").first()
    assert pod is not None and allocation is not None
    Pod.objects.filter(pk=pod.pk).update(content_hash="changed")
    PodAllocation.objects.filter(pk=allocation.pk).update(numa_resources={"0": {"cpu": 1}})
    assert Pod.objects.get(pk=pod.pk).row_hash != pod.row_hash
    assert PodAllocation.objects.get(pk=allocation.pk).row_hash != allocation.row_hash
