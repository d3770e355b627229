"""JSON columns decoded by orjson give exactly what Django's JSONField gives."""

from __future__ import annotations

import pytest
from django.utils import timezone

from topology.adapters.rows import decoded_values
from topology.models import Cluster, Node

pytestmark = pytest.mark.django_db
NOW = timezone.now()

LABELS = {"team": "nœud", "empty": "", "nested": {"a": [1, 2.5, None, True]}, "big": 2**62}


def test_json_columns_decode_to_the_same_values() -> None:
    cluster = Cluster.objects.create(name="c")
    Node.objects.create(
        cluster=cluster, name="a", labels=LABELS, allocatable={"cpu": 64000}, observed_at=NOW
    )
    Node.objects.create(cluster=cluster, name="b", observed_at=NOW)
    nodes = Node.objects.filter(cluster=cluster).order_by("name")
    fields = ("id", "name", "labels", "annotations", "allocatable", "unschedulable")
    assert list(decoded_values(nodes, fields)) == list(nodes.values(*fields))


def test_integers_beyond_64_bits_still_decode() -> None:
    cluster = Cluster.objects.create(name="c")
    Node.objects.create(cluster=cluster, name="a", labels={"huge": 2**70}, observed_at=NOW)
    (row,) = decoded_values(Node.objects.filter(cluster=cluster), ("labels",))
    assert row["labels"] == {"huge": 2**70}
