"""DRA `ResourceSlice` and `ResourceClaim` (resource.k8s.io/v1) → records.

Follows kubernetes staging/src/k8s.io/api/resource/v1/types.go (v1.35): a ResourceSlice
publishes devices of one driver's pool (`spec.driver`, `spec.pool`), each with typed
attributes and quantity capacities; a ResourceClaim's `status.allocation.devices.results`
names the devices allocated to it by (driver, pool, device), and `status.reservedFor`
the pods allowed to use them. Only what Topolens shows is read: which NUMA node each
device sits on, a device's attributes and capacities, and which devices are held.
Topolens does not judge DRA claims (yet): these records are mirrored and drawn; only
the DRA CPU driver's per-CPU uncore cache ids reach the engine (`uncore_caches_of`).
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from topology.parsers.fields import Reader
from topology.parsers.quantity import to_base_units

logger = logging.getLogger(__name__)

API_GROUP = "resource.k8s.io"
# v1beta2 has v1's shape (devices flat, no `basic`); v1beta1 and v1alpha3 nest each
# device's fields under `basic` and are not read.
READABLE_VERSIONS = ("v1", "v1beta2")

STANDARD_NUMA_NODE = "resource.kubernetes.io/numaNode"
# The attributes that name the NUMA node a device sits on, in the order they are trusted
# when a device publishes several. Where each comes from:
NUMA_ATTRIBUTES = (
    # The standard name: kubernetes staging/src/k8s.io/dynamic-resource-allocation/
    # deviceattribute/constants.go (StandardDeviceAttributeNUMANode). An `int`, or with the
    # DRAListTypeAttributes gate an `ints` list whose first element is the device's own
    # node (deviceattribute/numa_linux.go, makeNUMANodeListAttribute). The NVIDIA GPU
    # driver publishes it (kubernetes-sigs/dra-driver-nvidia-gpu cmd/gpu-kubelet-plugin/
    # numa.go, deviceinfo.go), and so does the CPU driver (kubernetes-sigs/dra-driver-cpu
    # pkg/device/builder.go).
    STANDARD_NUMA_NODE,
    # NVIDIA/k8s-dra-driver-gpu cmd/gpu-kubelet-plugin/deviceinfo.go (VfioDeviceInfo):
    # `numa` in the driver's domain, gpu.nvidia.com.
    "gpu.nvidia.com/numa",
    # ROCm/k8s-gpu-dra-driver cmd/gpu-kubeletplugin/deviceinfo.go: `numaNode` in the
    # driver's domain, gpu.amd.com.
    "gpu.amd.com/numaNode",
    # kubernetes-sigs/dranet pkg/apis/attributes.go (AttrNUMANode); dra-driver-cpu also
    # publishes it for alignment with DRANET (pkg/device/attributes.go).
    "dra.net/numaNode",
    # kubernetes-sigs/dra-driver-cpu pkg/device/attributes.go (addCompatibilityAttributes).
    "dra.cpu/numaNodeID",
)
# Intel's drivers (intel/intel-resource-drivers-for-kubernetes cmd/kubelet-gpu-plugin/
# node_state.go; gaudi, qat alike) publish pcieRoot and pciBusID but no NUMA attribute:
# their devices read "NUMA unknown".

# A device attribute holds exactly one of these (types.go DeviceAttribute).
_SCALAR_VALUES = {"int": int, "bool": bool, "string": str, "version": str}
_LIST_VALUES = {"ints": int, "bools": bool, "strings": str, "versions": str}
_NODE_SELECTIONS = ("nodeName", "nodeSelector", "allNodes", "perDeviceNodeSelection")


@dataclass(frozen=True)
class DeviceRecord:
    """One published device. `attributes`: qualified name → the attribute as the API
    writes it ({"string": "…"}, {"int": 0}); `capacity`: qualified name → an exact integer
    (the quantity's `Value()`, rounded up: bytes for memory, otherwise a count)."""

    name: str
    node_name: str
    numa_node: int | None
    numa_attribute: str  # the qualified name that gave numa_node; "" when unknown
    attributes: dict[str, dict[str, Any]]
    capacity: dict[str, int]


@dataclass(frozen=True)
class ResourceSliceRecord:
    name: str
    uid: str
    resource_version: str
    api_version: str
    driver: str
    pool: str
    pool_generation: int
    pool_slice_count: int
    node_name: str  # "" when the pool is not local to one node
    node_selection: str  # which of spec's oneOf NodeSelection fields is set
    devices: tuple[DeviceRecord, ...]


@dataclass(frozen=True)
class AllocatedDevice:
    """One `status.allocation.devices.results` entry: the device (driver, pool, device)."""

    request: str
    driver: str
    pool: str
    device: str


@dataclass(frozen=True)
class ClaimConsumer:
    """One `status.reservedFor` entry (a pod, mostly)."""

    resource: str
    name: str
    uid: str


@dataclass(frozen=True)
class ResourceClaimRecord:
    namespace: str
    name: str
    uid: str
    resource_version: str
    api_version: str
    allocated: tuple[AllocatedDevice, ...]
    reserved_for: tuple[ClaimConsumer, ...]


def qualified(name: str, driver: str) -> str:
    """An attribute or capacity name with its domain: types.go QualifiedName, "names which
    do not include the domain prefix are assumed to be part of the driver's domain"."""
    return name if "/" in name else f"{driver}/{name}"


def parse_resource_slice(obj: Any) -> ResourceSliceRecord:
    reader = Reader(obj, "ResourceSlice")
    api_version = _api_version(reader)
    spec = reader.at("spec")
    driver = spec.get("driver", str)
    if not driver:
        raise reader.error("spec.driver", "required field is empty")
    selection = _node_selection(reader)
    node_name = spec.get("nodeName", str, default="")
    per_device = selection == "perDeviceNodeSelection"
    return ResourceSliceRecord(
        name=reader.get("metadata.name", str),
        uid=reader.get("metadata.uid", str, default=""),
        resource_version=reader.get("metadata.resourceVersion", str, default=""),
        api_version=api_version,
        driver=driver,
        pool=reader.get("spec.pool.name", str),
        pool_generation=_non_negative(reader, "spec.pool.generation"),
        pool_slice_count=_non_negative(reader, "spec.pool.resourceSliceCount"),
        node_name=node_name,
        node_selection=selection,
        devices=_devices(reader, driver, node_name, per_device),
    )


def parse_resource_claim(obj: Any) -> ResourceClaimRecord:
    reader = Reader(obj, "ResourceClaim")
    api_version = _api_version(reader)
    results = reader.get("status.allocation.devices.results", list, default=[])
    consumers = reader.get("status.reservedFor", list, default=[])
    return ResourceClaimRecord(
        namespace=reader.get("metadata.namespace", str, default="default"),
        name=reader.get("metadata.name", str),
        uid=reader.get("metadata.uid", str, default=""),
        resource_version=reader.get("metadata.resourceVersion", str, default=""),
        api_version=api_version,
        allocated=tuple(_allocated(reader, index, item) for index, item in enumerate(results)),
        reserved_for=tuple(_consumer(reader, index, item) for index, item in enumerate(consumers)),
    )


def _api_version(reader: Reader) -> str:
    api_version = reader.get("apiVersion", str)
    group, _, version = api_version.rpartition("/")
    if group != API_GROUP or version not in READABLE_VERSIONS:
        raise reader.error(
            "apiVersion",
            f"{api_version!r} is not read: Topolens reads {reader.kind} at "
            + " or ".join(f"{API_GROUP}/{v}" for v in READABLE_VERSIONS)
            + f" (kubectl get {reader.kind.lower()}s.v1.{API_GROUP} -o json)",
        )
    return api_version


def _node_selection(reader: Reader) -> str:
    """Which of nodeName, nodeSelector, allNodes, perDeviceNodeSelection is set: types.go
    says exactly one is."""
    spec = reader.obj.get("spec") if isinstance(reader.obj.get("spec"), dict) else {}
    present = [key for key in _NODE_SELECTIONS if spec.get(key) not in (None, "", False)]
    if len(present) != 1:
        found = ", ".join(present) or "none"
        raise reader.error(
            "spec",
            "exactly one of nodeName, nodeSelector, allNodes and perDeviceNodeSelection "
            f"must be set (found: {found})",
        )
    return present[0]


def _non_negative(reader: Reader, path: str) -> int:
    value = reader.get(path, int)
    if value < 0:
        raise reader.error(path, f"must not be negative, got {value}")
    return int(value)


def _devices(
    reader: Reader, driver: str, node_name: str, per_device: bool
) -> tuple[DeviceRecord, ...]:
    items = reader.get("spec.devices", list, default=[])
    devices = []
    for index, item in enumerate(items):
        path = f"spec.devices[{index}]"
        reader.check(path, item, dict)
        name = reader.present_or_default(f"{path}.name", item.get("name"), str)
        own_node = item.get("nodeName") if per_device else node_name
        attributes = _attributes(reader, f"{path}.attributes", item.get("attributes"))
        attributes = {qualified(key, driver): value for key, value in attributes.items()}
        numa_node, numa_attribute = numa_node_of(attributes, f"{driver}/{name}")
        devices.append(
            DeviceRecord(
                name=name,
                node_name=own_node if isinstance(own_node, str) else "",
                numa_node=numa_node,
                numa_attribute=numa_attribute,
                attributes=attributes,
                capacity=_capacity(reader, f"{path}.capacity", item.get("capacity"), driver),
            )
        )
    return tuple(devices)


def _attributes(reader: Reader, path: str, value: Any) -> dict[str, dict[str, Any]]:
    if value is None:
        return {}
    reader.check(path, value, dict)
    return {str(key): _attribute(reader, f"{path}.{key}", item) for key, item in value.items()}


def _attribute(reader: Reader, path: str, value: Any) -> dict[str, Any]:
    """A DeviceAttribute: exactly one typed field set (types.go)."""
    reader.check(path, value, dict)
    present = [key for key in (*_SCALAR_VALUES, *_LIST_VALUES) if value.get(key) is not None]
    if len(present) != 1:
        known = ", ".join((*_SCALAR_VALUES, *_LIST_VALUES))
        raise reader.error(path, f"an attribute sets exactly one of {known}")
    key = present[0]
    if key in _SCALAR_VALUES:
        reader.check(f"{path}.{key}", value[key], _SCALAR_VALUES[key])
    else:
        items = reader.check(f"{path}.{key}", value[key], list)
        if not items:
            raise reader.error(f"{path}.{key}", "a list attribute must not be empty")
        for index, item in enumerate(items):
            reader.check(f"{path}.{key}[{index}]", item, _LIST_VALUES[key])
    return {key: value[key]}


def _capacity(reader: Reader, path: str, value: Any, driver: str) -> dict[str, int]:
    """Capacities as exact integers (DeviceCapacity.value is a quantity)."""
    if value is None:
        return {}
    reader.check(path, value, dict)
    amounts = {}
    for key, item in value.items():
        where = f"{path}.{key}"
        reader.check(where, item, dict)
        if "value" not in item:
            raise reader.error(f"{where}.value", "required field is missing")
        amounts[qualified(str(key), driver)] = reader.convert(
            f"{where}.value", item["value"], lambda v: to_base_units("", v)
        )
    return amounts


def numa_node_of(attributes: dict[str, dict[str, Any]], device: str = "") -> tuple[int | None, str]:
    """The device's NUMA node and the attribute that gave it, from the first of
    `NUMA_ATTRIBUTES` it publishes as a usable number; (None, "") when none does.

    A list (`ints`) gives its first element, the device's own node (numa_linux.go). A
    negative number means no NUMA affinity (sysfs numa_node -1; upstream tells drivers not
    to publish it, some do): it is skipped. An attribute of another type is skipped with
    a warning, since the API allows any type under any name.
    """
    for name in NUMA_ATTRIBUTES:
        attribute = attributes.get(name)
        if attribute is None:
            continue
        number = _first_int(attribute)
        if number is None:
            logger.warning("%s: %s is not an integer (%r); ignored", device, name, attribute)
        elif number >= 0:
            return number, name
    return None, ""


def _first_int(attribute: dict[str, Any]) -> int | None:
    value = attribute.get("int")
    if value is None and attribute.get("ints"):
        value = attribute["ints"][0]
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _allocated(reader: Reader, index: int, item: Any) -> AllocatedDevice:
    path = f"status.allocation.devices.results[{index}]"
    reader.check(path, item, dict)
    fields = {
        key: reader.present_or_default(f"{path}.{key}", item.get(key), str)
        for key in ("request", "driver", "pool", "device")
    }
    return AllocatedDevice(**fields)


def _consumer(reader: Reader, index: int, item: Any) -> ClaimConsumer:
    path = f"status.reservedFor[{index}]"
    reader.check(path, item, dict)
    return ClaimConsumer(
        resource=reader.present_or_default(f"{path}.resource", item.get("resource"), str),
        name=reader.present_or_default(f"{path}.name", item.get("name"), str),
        uid=reader.present_or_default(f"{path}.uid", item.get("uid"), str, ""),
    )


# The DRA CPU driver's per-CPU devices (kubernetes-sigs/dra-driver-cpu
# pkg/driver/attributes.go, individual device mode: one device per logical CPU) name each
# CPU and its uncore (last-level, L3) cache: the kubelet's `UncoreCacheID`, which no NRT
# producer and no koordlet annotation publishes. The kubelet's
# prefer-align-cpus-by-uncorecache option reads it.
DRA_CPU_ID = "dra.cpu/cpuID"
DRA_CPU_CACHE_L3_ID = "dra.cpu/cacheL3ID"


def uncore_caches_of(attribute_maps: Iterable[dict[str, dict[str, Any]]]) -> dict[int, int]:
    """CPU id → uncore (L3) cache id from the DRA CPU driver's per-CPU devices among
    devices' attributes; devices without both attributes as integers are skipped."""
    caches: dict[int, int] = {}
    for attributes in attribute_maps:
        cpu = _first_int(attributes.get(DRA_CPU_ID) or {})
        cache = _first_int(attributes.get(DRA_CPU_CACHE_L3_ID) or {})
        if cpu is not None and cache is not None and cpu >= 0 and cache >= 0:
            caches[cpu] = cache
    return caches


def uncore_caches_for(
    cpus: Iterable[tuple[int, int, int, int]], caches: dict[int, int]
) -> dict[int, int]:
    """`caches` when they name exactly the node's CPUs (its published CPU table), else
    none: a partial or foreign table would misplace CPUs, and the kubelet's own
    fallback (one uncore cache per socket) is then assumed and said."""
    ids = {row[0] for row in cpus}
    if not caches or set(caches) != ids:
        if caches:
            logger.warning(
                "DRA CPU devices name %d CPUs, the CPU table %d: uncore caches ignored",
                len(caches),
                len(ids),
            )
        return {}
    return caches
