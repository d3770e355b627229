"""DRA objects in the mirror: imported from dumps, reconciled, read back by node and NUMA
node with the devices claims hold."""

from __future__ import annotations

import json
from io import StringIO

import pytest
from django.core.management import call_command

from tests.topology.dra_objects import (
    DRIVER,
    gpu,
    resource_claim,
    resource_slice,
    standard_numa,
)
from topology.models import (
    Cluster,
    ResourceClaim,
    ResourceClaimDevice,
    ResourceSlice,
    ResourceSliceDevice,
)
from topology.selectors.dra import by_numa_node, node_dra_devices, nodes_with_dra_devices
from topology.services.mirror.importer import import_objects
from topology.services.mirror.loading import parse_documents

pytestmark = pytest.mark.django_db


def gpu_slice(**options: object) -> dict:
    devices = [
        gpu("gpu-0", standard_numa(0)),
        gpu("gpu-1", standard_numa(0)),
        gpu("gpu-2", standard_numa(1)),
        gpu("gpu-3"),  # no NUMA attribute
    ]
    return resource_slice("gpu-1-slice", devices, **options)  # type: ignore[arg-type]


def test_an_import_mirrors_slices_and_claims_with_their_devices() -> None:
    summary = import_objects(
        cluster_name="dra", objects=[gpu_slice(), resource_claim("train", ["gpu-2"])]
    )
    assert summary.ok, summary.errors
    assert summary.counts["ResourceSlice"]["created"] == 1
    assert summary.counts["ResourceClaim"]["created"] == 1
    devices = ResourceSliceDevice.objects.filter(resource_slice__name="gpu-1-slice")
    assert dict(devices.values_list("name", "numa_node")) == {
        "gpu-0": 0,
        "gpu-1": 0,
        "gpu-2": 1,
        "gpu-3": None,
    }
    assert devices.get(name="gpu-0").capacity == {
        f"{DRIVER}/memory": 80 * 2**30,
        f"{DRIVER}/cores": 132,
    }
    claimed = ResourceClaimDevice.objects.get(claim__name="train")
    assert (claimed.driver, claimed.pool, claimed.device) == (DRIVER, "gpu-1", "gpu-2")


def test_a_kubectl_list_dump_loads_dra_items() -> None:
    dump = {"apiVersion": "v1", "kind": "List", "items": [gpu_slice(), resource_claim("t", [])]}
    objects = parse_documents(json.dumps(dump))
    summary = import_objects(cluster_name="dra", objects=objects)
    assert summary.ok and ResourceSlice.objects.count() == ResourceClaim.objects.count() == 1


def test_a_reimport_of_the_same_objects_writes_nothing() -> None:
    objects = [gpu_slice(), resource_claim("train", ["gpu-2"])]
    import_objects(cluster_name="dra", objects=objects)
    summary = import_objects(cluster_name="dra", objects=objects)
    assert summary.total("unchanged") == 2 and summary.total("updated") == 0


def test_a_changed_slice_replaces_its_devices() -> None:
    import_objects(cluster_name="dra", objects=[gpu_slice()])
    smaller = resource_slice("gpu-1-slice", [gpu("gpu-9", standard_numa(1))], generation=2)
    summary = import_objects(cluster_name="dra", objects=[smaller])
    assert summary.counts["ResourceSlice"]["updated"] == 1
    assert list(ResourceSliceDevice.objects.values_list("name", flat=True)) == ["gpu-9"]


def test_a_covering_reimport_removes_a_claim_by_namespace_and_name() -> None:
    first = [resource_claim("train", ["gpu-0"]), resource_claim("train", [], namespace="other")]
    import_objects(cluster_name="dra", objects=first)
    summary = import_objects(cluster_name="dra", objects=[first[1]])
    assert summary.counts["ResourceClaim"]["removed"] == 1
    assert list(ResourceClaim.objects.values_list("namespace", "name")) == [("other", "train")]
    assert not ResourceClaimDevice.objects.exists()


def test_a_malformed_slice_is_an_import_error_and_the_rest_is_written() -> None:
    broken = gpu_slice()
    broken["spec"]["devices"][0]["capacity"]["memory"]["value"] = "lots"
    fine = resource_slice("other-slice", [gpu("nic-0")], node="gpu-2")
    summary = import_objects(cluster_name="dra", objects=[broken, fine])
    assert not summary.ok
    assert "spec.devices[0].capacity.memory.value" in summary.errors[0]
    assert list(ResourceSlice.objects.values_list("name", flat=True)) == ["other-slice"]


def test_a_node_reads_its_devices_by_numa_node_with_what_claims_hold() -> None:
    import_objects(
        cluster_name="dra",
        objects=[
            gpu_slice(),
            resource_slice("elsewhere", [gpu("gpu-0", standard_numa(0))], node="gpu-2"),
            resource_claim("train", ["gpu-2"]),
            resource_claim("other-pool", ["gpu-0"], pool="gpu-2"),
        ],
    )
    cluster = Cluster.objects.get(name="dra")
    groups = by_numa_node(node_dra_devices(cluster, "gpu-1"))
    assert [(g.title, [d.name for d in g.devices], g.held) for g in groups] == [
        ("NUMA 0", ["gpu-0", "gpu-1"], 0),
        ("NUMA 1", ["gpu-2"], 1),
        ("NUMA unknown", ["gpu-3"], 0),
    ]
    (holder,) = groups[1].devices[0].held_by
    assert (holder.claim, holder.request, holder.pods) == ("ml/train", "gpu", ("ml/trainer-0",))
    assert groups[1].devices[0].label == "Example GPU 80GB, gpu"
    assert groups[1].devices[0].capacity_text == "cores 132, memory 80.0 GiB"
    assert nodes_with_dra_devices(cluster) == ["gpu-1", "gpu-2"]


def test_only_the_newest_generation_of_a_pool_counts() -> None:
    old = resource_slice("old", [gpu("gpu-0", standard_numa(0))], generation=1)
    new = resource_slice("new", [gpu("gpu-5", standard_numa(1))], generation=2)
    import_objects(cluster_name="dra", objects=[old, new])
    cluster = Cluster.objects.get(name="dra")
    assert [d.name for d in node_dra_devices(cluster, "gpu-1")] == ["gpu-5"]


def test_the_import_command_reads_a_kubectl_dump_of_dra_objects(tmp_path) -> None:
    dump = tmp_path / "dra.json"
    items = [gpu_slice(), resource_claim("train", ["gpu-0"])]
    dump.write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": items}))
    out = StringIO()
    call_command("import_objects", "--cluster", "offline", str(dump), stdout=out)
    lines = out.getvalue().splitlines()
    assert any(line.split()[:2] == ["ResourceSlice", "1"] for line in lines), lines
    assert any(line.split()[:2] == ["ResourceClaim", "1"] for line in lines), lines
    cluster = Cluster.objects.get(name="offline")
    assert [d.held for d in node_dra_devices(cluster, "gpu-1")] == [True, False, False, False]
