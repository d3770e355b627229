"""koordlet's NRT annotations (formats.md §3.3) → KoordletRecord."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

from topology.parsers.cpulist import parse_cpulist
from topology.parsers.fields import Reader
from topology.parsers.node import NodeReservationRecord, parse_node_reservation

CPU_TOPOLOGY = "node.koordinator.sh/cpu-topology"
CPU_SHARED_POOLS = "node.koordinator.sh/cpu-shared-pools"
BE_CPU_SHARED_POOLS = "node.koordinator.sh/be-cpu-shared-pools"
POD_CPU_ALLOCS = "node.koordinator.sh/pod-cpu-allocs"
CPU_MANAGER_POLICY = "kubelet.koordinator.sh/cpu-manager-policy"
CPU_BASIC_INFO = "node.koordinator.sh/cpu-basic-info"
SYSTEM_QOS_RESOURCE = "node.koordinator.sh/system-qos-resource"
_BASE = "metadata.annotations"

CPUTuple = tuple[int, int, int, int]


@dataclass(frozen=True)
class KubeletCPUAlloc:
    """One kubelet-static pinned pod from `pod-cpu-allocs`."""

    namespace: str
    name: str
    uid: str
    cpuset: frozenset[int]
    managed_by_kubelet: bool


@dataclass(frozen=True)
class SharedPool:
    socket: int
    numa: int
    cpuset: frozenset[int]


@dataclass(frozen=True)
class KoordletRecord:
    cpus: tuple[CPUTuple, ...] = ()
    shared_pools: tuple[SharedPool, ...] = ()
    be_shared_pools: tuple[SharedPool, ...] = ()
    pod_cpu_allocs: tuple[KubeletCPUAlloc, ...] = ()
    cpu_manager_policy: str = ""
    cpu_manager_options: dict[str, str] = field(default_factory=dict)
    kubelet_reserved_cpus: frozenset[int] = frozenset()
    node_reservation: NodeReservationRecord | None = None
    cpu_basic_info: dict[str, Any] = field(default_factory=dict)
    system_qos_cpus: frozenset[int] = frozenset()
    system_qos_exclusive: bool = False


def parse_koordlet_annotations(reader: Reader, annotations: dict[str, str]) -> KoordletRecord:
    policy = _json(reader, annotations, CPU_MANAGER_POLICY, dict) or {}
    system_qos = _json(reader, annotations, SYSTEM_QOS_RESOURCE, dict) or {}
    return KoordletRecord(
        cpus=_cpu_topology(reader, annotations),
        shared_pools=_pools(reader, annotations, CPU_SHARED_POOLS),
        be_shared_pools=_pools(reader, annotations, BE_CPU_SHARED_POOLS),
        pod_cpu_allocs=_pod_cpu_allocs(reader, annotations),
        cpu_manager_policy=str(policy.get("policy") or ""),
        cpu_manager_options={str(k): str(v) for k, v in (policy.get("options") or {}).items()},
        kubelet_reserved_cpus=_cpulist(
            reader, f"{_path(CPU_MANAGER_POLICY)}.reservedCPUs", policy.get("reservedCPUs") or ""
        ),
        node_reservation=parse_node_reservation(reader, annotations, _BASE),
        cpu_basic_info=_json(reader, annotations, CPU_BASIC_INFO, dict) or {},
        system_qos_cpus=_cpulist(
            reader, f"{_path(SYSTEM_QOS_RESOURCE)}.cpuset", system_qos.get("cpuset") or ""
        ),
        # IsCPUSetExclusive: absent (nil) means exclusive
        system_qos_exclusive=system_qos.get("cpusetExclusive") is not False,
    )


def _path(key: str) -> str:
    return f"{_BASE}[{key}]"


def _json(reader: Reader, annotations: dict[str, str], key: str, typ: type) -> Any:
    if key not in annotations:
        return None
    value = reader.json_field(_path(key), annotations[key])
    return None if value is None else reader.check(_path(key), value, typ)


def _cpulist(reader: Reader, path: str, text: Any) -> frozenset[int]:
    return reader.convert(path, text, parse_cpulist)


def _int_field(reader: Reader, path: str, item: dict[str, Any], key: str) -> int:
    return int(reader.check(f"{path}.{key}", item.get(key), int))


def _cpu_topology(reader: Reader, annotations: dict[str, str]) -> tuple[CPUTuple, ...]:
    text = annotations.get(CPU_TOPOLOGY)
    known = _well_formed_cpu_topology(text) if isinstance(text, str) else None
    return known if known is not None else _checked_cpu_topology(reader, annotations)


@lru_cache(maxsize=256)
def _well_formed_cpu_topology(text: str) -> tuple[CPUTuple, ...] | None:
    """The CPU rows of a well-formed annotation, memoised by its text; None otherwise.

    Nodes of one hardware model publish the same annotation, and a cold sync parses
    thousands of them (384 rows each). Anything unusual returns None, and the checked
    path then parses it again and names what is wrong.
    """
    try:
        data = json.loads(text)
    except ValueError:
        return None
    detail = data.get("detail") if type(data) is dict else None
    if type(detail) is not list:
        return None
    cpus: dict[int, CPUTuple] = {}
    for item in detail:
        cpu = _cpu_row(item)
        if cpu is None or cpu[0] in cpus:
            return None
        cpus[cpu[0]] = cpu
    return tuple(cpus[k] for k in sorted(cpus))


def _checked_cpu_topology(reader: Reader, annotations: dict[str, str]) -> tuple[CPUTuple, ...]:
    data = _json(reader, annotations, CPU_TOPOLOGY, dict) or {}
    path = f"{_path(CPU_TOPOLOGY)}.detail"
    cpus: dict[int, CPUTuple] = {}
    for index, item in enumerate(reader.check(path, data.get("detail") or [], list)):
        cpu = _cpu_row(item)
        if cpu is None:  # something is wrong with it: the slow path names the field
            item_path = f"{path}[{index}]"
            reader.check(item_path, item, dict)
            cpu = _checked_cpu_row(reader, item_path, item)
        if cpu[0] in cpus:
            raise reader.error(f"{path}[{index}]", f"cpu {cpu[0]} is listed twice")
        cpus[cpu[0]] = cpu
    return tuple(cpus[k] for k in sorted(cpus))


def _cpu_row(item: Any) -> CPUTuple | None:
    """The fast path for a well-formed row (a 384-CPU node has 384 of them per NRT)."""
    if type(item) is not dict:
        return None
    row = (item.get("id"), item.get("core"), item.get("socket"), item.get("node"))
    if all(type(value) is int for value in row):
        return row  # type: ignore[return-value]
    return None


def _checked_cpu_row(reader: Reader, path: str, item: dict[str, Any]) -> CPUTuple:
    cpu = tuple(_int_field(reader, path, item, k) for k in ("id", "core", "socket", "node"))
    return (cpu[0], cpu[1], cpu[2], cpu[3])


def _pools(reader: Reader, annotations: dict[str, str], key: str) -> tuple[SharedPool, ...]:
    pools = []
    for index, item in enumerate(_json(reader, annotations, key, list) or []):
        path = f"{_path(key)}[{index}]"
        reader.check(path, item, dict)
        pools.append(
            SharedPool(
                socket=_int_field(reader, path, item, "socket"),
                numa=_int_field(reader, path, item, "node"),
                cpuset=_cpulist(reader, f"{path}.cpuset", item.get("cpuset") or ""),
            )
        )
    return tuple(pools)


def _pod_cpu_allocs(reader: Reader, annotations: dict[str, str]) -> tuple[KubeletCPUAlloc, ...]:
    allocs = []
    for index, item in enumerate(_json(reader, annotations, POD_CPU_ALLOCS, list) or []):
        path = f"{_path(POD_CPU_ALLOCS)}[{index}]"
        reader.check(path, item, dict)
        allocs.append(
            KubeletCPUAlloc(
                # omitempty upstream: koordlet leaves them out when it has no pod meta
                namespace=reader.check(f"{path}.namespace", item.get("namespace") or "", str),
                name=reader.check(f"{path}.name", item.get("name") or "", str),
                uid=str(item.get("uid") or ""),
                cpuset=_cpulist(reader, f"{path}.cpuset", item.get("cpuset")),
                managed_by_kubelet=bool(item.get("managedByKubelet")),
            )
        )
    return tuple(allocs)
