"""DRA ResourceSlices and ResourceClaims → records: NUMA nodes from each known attribute,
capacities as exact integers, malformed objects as errors naming the field."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from tests.topology.dra_objects import (
    DRIVER,
    gpu,
    resource_claim,
    resource_slice,
    standard_numa,
)
from topology.parsers import MirroredKind, ObjectParseError, classify, object_key, parse_object
from topology.parsers.resource_slice import (
    NUMA_ATTRIBUTES,
    ClaimConsumer,
    parse_resource_claim,
    parse_resource_slice,
)


def test_a_slice_becomes_a_record_with_qualified_attributes_and_exact_capacities() -> None:
    record = parse_resource_slice(resource_slice("s1", [gpu("gpu-0", standard_numa(1))]))
    assert (record.driver, record.pool, record.node_name) == (DRIVER, "gpu-1", "gpu-1")
    assert (record.pool_generation, record.pool_slice_count) == (1, 1)
    assert record.node_selection == "nodeName"
    (device,) = record.devices
    assert (device.name, device.node_name) == ("gpu-0", "gpu-1")
    assert (device.numa_node, device.numa_attribute) == (1, "resource.kubernetes.io/numaNode")
    assert device.attributes[f"{DRIVER}/productName"] == {"string": "Example GPU 80GB"}
    assert device.capacity == {f"{DRIVER}/memory": 80 * 2**30, f"{DRIVER}/cores": 132}


# Each attribute name Topolens reads a NUMA node from, as its driver publishes it: the
# driver's own names are written without their domain (types.go QualifiedName).
NUMA_CASES = [
    pytest.param(
        DRIVER,
        {"resource.kubernetes.io/numaNode": {"int": 3}},
        3,
        "resource.kubernetes.io/numaNode",
        id="standard-attribute-int",
    ),
    pytest.param(
        DRIVER,
        {"resource.kubernetes.io/numaNode": {"ints": [2, 3]}},
        2,
        "resource.kubernetes.io/numaNode",
        id="standard-attribute-list-gives-its-first-the-devices-own-node",
    ),
    pytest.param(
        "gpu.nvidia.com", {"numa": {"int": 1}}, 1, "gpu.nvidia.com/numa", id="nvidia-vfio-numa"
    ),
    pytest.param(
        "gpu.amd.com", {"numaNode": {"int": 1}}, 1, "gpu.amd.com/numaNode", id="amd-numaNode"
    ),
    pytest.param("dra.net", {"numaNode": {"int": 0}}, 0, "dra.net/numaNode", id="dranet-numaNode"),
    pytest.param(
        "dra.cpu",
        {"dra.cpu/numaNodeID": {"int": 1}},
        1,
        "dra.cpu/numaNodeID",
        id="cpu-driver-numaNodeID",
    ),
    pytest.param(
        "dra.cpu",
        {"dra.net/numaNode": {"int": 1}, "resource.kubernetes.io/numaNode": {"int": 0}},
        0,
        "resource.kubernetes.io/numaNode",
        id="the-standard-name-wins-over-a-vendor-one",
    ),
    pytest.param(
        "gpu.amd.com",
        {"numaNode": {"int": -1}},
        None,
        "",
        id="negative-means-no-numa-affinity",
    ),
    pytest.param(
        DRIVER,
        {"resource.kubernetes.io/numaNode": {"string": "0"}},
        None,
        "",
        id="a-string-is-not-a-numa-node",
    ),
    pytest.param(DRIVER, {"pcieRoot": {"string": "pci0000:00"}}, None, "", id="none-published"),
    pytest.param(
        DRIVER,
        {"numaNode": {"int": 1}},
        None,
        "",
        id="an-unknown-vendor-numaNode-is-not-guessed",
    ),
]


@pytest.mark.parametrize(("driver", "attributes", "numa", "source"), NUMA_CASES)
def test_the_numa_node_comes_from_the_first_known_attribute(
    driver: str, attributes: dict[str, Any], numa: int | None, source: str
) -> None:
    device = {"name": "d0", "attributes": attributes}
    record = parse_resource_slice(resource_slice("s1", [device], driver=driver))
    assert (record.devices[0].numa_node, record.devices[0].numa_attribute) == (numa, source)


def test_every_known_numa_attribute_is_qualified() -> None:
    assert all("/" in name for name in NUMA_ATTRIBUTES)
    assert NUMA_ATTRIBUTES[0] == "resource.kubernetes.io/numaNode"


def test_v1beta2_is_read_as_v1() -> None:
    obj = resource_slice(
        "s1", [gpu("gpu-0", standard_numa(0))], api_version="resource.k8s.io/v1beta2"
    )
    assert parse_resource_slice(obj).devices[0].numa_node == 0


def _broken(path: str, value: Any) -> dict[str, Any]:
    obj = copy.deepcopy(resource_slice("bad", [gpu("gpu-0", standard_numa(0))]))
    target = obj
    keys = path.split(".")
    for key in keys[:-1]:
        target = target[int(key)] if isinstance(target, list) else target[key]
    if value is _DELETE:
        del target[keys[-1]]
    else:
        target[keys[-1]] = value
    return obj


_DELETE = object()
MALFORMED_SLICES = [
    pytest.param(
        "apiVersion", "resource.k8s.io/v1beta1", "apiVersion", "is not read", id="v1beta1"
    ),
    pytest.param("spec.driver", _DELETE, "spec.driver", "missing", id="no-driver"),
    pytest.param("spec.pool", _DELETE, "spec.pool.name", "missing", id="no-pool"),
    pytest.param(
        "spec.pool.generation", "7", "spec.pool.generation", "integer", id="generation-a-string"
    ),
    pytest.param("spec.nodeName", _DELETE, "spec", "exactly one of", id="no-node-selection"),
    pytest.param("spec.allNodes", True, "spec", "nodeName, allNodes", id="two-node-selections"),
    pytest.param("spec.devices", {"gpu-0": {}}, "spec.devices", "a list", id="devices-a-map"),
    pytest.param("spec.devices.0.name", _DELETE, "spec.devices[0].name", "missing", id="no-name"),
    pytest.param(
        "spec.devices.0.attributes.type",
        {"string": "gpu", "int": 1},
        "spec.devices[0].attributes.type",
        "exactly one of",
        id="attribute-with-two-values",
    ),
    pytest.param(
        "spec.devices.0.attributes.type",
        {"ints": []},
        "spec.devices[0].attributes.type.ints",
        "must not be empty",
        id="empty-list-attribute",
    ),
    pytest.param(
        "spec.devices.0.capacity.memory",
        {"value": "80 gigs"},
        "spec.devices[0].capacity.memory.value",
        "not a Kubernetes quantity",
        id="capacity-not-a-quantity",
    ),
    pytest.param(
        "spec.devices.0.capacity.memory",
        {"value": "-1"},
        "spec.devices[0].capacity.memory.value",
        "negative",
        id="negative-capacity",
    ),
]


@pytest.mark.parametrize(("path", "value", "field", "message"), MALFORMED_SLICES)
def test_a_malformed_slice_is_an_error_naming_the_field(
    path: str, value: Any, field: str, message: str
) -> None:
    with pytest.raises(ObjectParseError) as error:
        parse_object(_broken(path, value))
    assert error.value.kind == "ResourceSlice" and error.value.name == "bad"
    assert error.value.field == field
    assert message in error.value.message


def test_a_claim_names_its_allocated_devices_and_its_pods() -> None:
    record = parse_resource_claim(resource_claim("train", ["gpu-0", "gpu-1"]))
    assert (record.namespace, record.name) == ("ml", "train")
    assert [(d.driver, d.pool, d.device) for d in record.allocated] == [
        (DRIVER, "gpu-1", "gpu-0"),
        (DRIVER, "gpu-1", "gpu-1"),
    ]
    assert record.reserved_for == (ClaimConsumer("pods", "trainer-0", "uid-trainer-0"),)


def test_an_unallocated_claim_holds_nothing() -> None:
    claim = resource_claim("pending", [])
    del claim["status"]
    record = parse_resource_claim(claim)
    assert record.allocated == () and record.reserved_for == ()


def test_a_claim_result_without_its_device_is_an_error() -> None:
    claim = resource_claim("broken", ["gpu-0"])
    del claim["status"]["allocation"]["devices"]["results"][0]["device"]
    with pytest.raises(ObjectParseError) as error:
        parse_object(claim)
    assert error.value.field == "status.allocation.devices.results[0].device"


def test_dra_kinds_are_classified_and_claims_keyed_by_namespace() -> None:
    claim = resource_claim("train", ["gpu-0"])
    assert classify(resource_slice("s1", [])) is MirroredKind.RESOURCE_SLICE
    assert classify(claim) is MirroredKind.RESOURCE_CLAIM
    assert object_key(MirroredKind.RESOURCE_CLAIM, claim) == ("ml", "train")
    other_group = {**claim, "apiVersion": "example.com/v1"}
    assert classify(other_group) is None
