"""nodes/{node}: the DRA devices ResourceSlices publish on the node, as exact integers."""

from __future__ import annotations

import pytest
from rest_framework.test import APIClient

from tests.topology.dra_objects import DRIVER, gpu, resource_claim, resource_slice, standard_numa
from topology.models import Cluster
from topology.services.mirror.importer import import_objects

from .factories import full_node

pytestmark = pytest.mark.django_db


def test_a_node_in_full_lists_its_dra_devices(viewer: APIClient, cluster: Cluster) -> None:
    full_node(cluster, name="gpu-1")
    full_node(cluster, name="cpu-1")
    slice_ = resource_slice("s1", [gpu("gpu-0", standard_numa(1)), gpu("gpu-1")])
    import_objects(cluster_name="prod", objects=[slice_, resource_claim("train", ["gpu-0"])])
    body = viewer.get("/api/v1/clusters/prod/nodes/gpu-1").json()
    held, free = body["dra_devices"]
    assert held == {
        "driver": DRIVER,
        "pool": "gpu-1",
        "name": "gpu-0",
        "numa_node": 1,
        "numa_attribute": "resource.kubernetes.io/numaNode",
        "attributes": {
            f"{DRIVER}/productName": {"string": "Example GPU 80GB"},
            f"{DRIVER}/type": {"string": "gpu"},
            "resource.kubernetes.io/numaNode": {"int": 1},
        },
        "capacity": {f"{DRIVER}/memory": 85899345920, f"{DRIVER}/cores": 132},
        "held": True,
        "held_by": [{"claim": "ml/train", "request": "gpu", "pods": ["ml/trainer-0"]}],
    }
    assert (free["name"], free["numa_node"], free["held"], free["held_by"]) == (
        "gpu-1",
        None,
        False,
        [],
    )
    assert viewer.get("/api/v1/clusters/prod/nodes/cpu-1").json()["dra_devices"] == []
