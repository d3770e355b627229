"""koordinator cpu_accumulator_test.go tables, ported as data.

`topology(sockets, nodes_per_socket, cores_per_node, cpus_per_core)` reproduces
buildCPUTopologyForTest: cpu ids are sequential, core ids global, NUMA ids
`socket << 16 | node`.
"""

from __future__ import annotations

import pytest

from scheduler_api.engine.koordinator.reference.cpu import CPUInfo, KoordCPUTopology
from scheduler_api.engine.model.results import parse_cpuset


def topology(
    sockets: int, nodes_per_socket: int, cores_per_node: int, per_core: int
) -> KoordCPUTopology:
    details: dict[int, CPUInfo] = {}
    node = core = cpu = 0
    for s in range(sockets):
        for _ in range(nodes_per_socket):
            for _ in range(cores_per_node):
                for _ in range(per_core):
                    details[cpu] = CPUInfo(cpu, core, s << 16 | node, s)
                    cpu += 1
                core += 1
            node += 1
    total_nodes = nodes_per_socket * sockets
    return KoordCPUTopology(
        details, len(details), cores_per_node * total_nodes, total_nodes, sockets
    )


def cpus(text: str) -> frozenset[int]:
    return parse_cpuset(text)


T1142, T2142, T2242, T2222, T2182 = (
    (1, 1, 4, 2),
    (2, 1, 4, 2),
    (2, 2, 4, 2),
    (2, 2, 2, 2),
    (2, 1, 8, 2),
)

# TestTakeFullPCPUs (NUMAMostAllocated): (topology, allocated, needed, want)
FULL_PCPUS_MOST = [
    pytest.param(T1142, "", 2, "0-1", id="allocate-on-non-numa-node"),
    pytest.param(T1142, "0-1", 2, "2-3", id="with-allocated-cpus"),
    pytest.param(T2142, "", 8, "0-7", id="allocate-whole-socket"),
    pytest.param(T2142, "", 12, "0-11", id="allocate-across-socket"),
    pytest.param(T2142, "0-1", 8, "8-15", id="whole-socket-with-partially-allocated-socket"),
    pytest.param(T2242, "0-5,16-23", 6, "24-29", id="allocate-in-the-smallest-idle-socket"),
    pytest.param(T2242, "0-5,16-23", 12, "6-15,24-25", id="most-cpus-on-the-same-socket"),
    pytest.param(T2242, "0-3,8-11", 4, "4-7", id="allocate-from-first-socket"),
    pytest.param(T2222, "0,2,4,8,12", 4, "10-11,14-15", id="allocate-with-less-spread-cpus"),
    pytest.param(T2222, "0,2,4,8,10,12", 6, "5-7,13-15", id="allocate-with-the-most-spread-cpus"),
    pytest.param(T2222, "0,2,4,8-10,12", 6, "6-7,11,13-15",
                 id="most-spread-cpus-on-the-smallest-idle-socket"),
]  # fmt: skip

# TestTakeFullPCPUsWithNUMALeastAllocated
FULL_PCPUS_LEAST = [
    pytest.param(T1142, "", 2, "0-1", id="allocate-on-non-numa-node"),
    pytest.param(T1142, "0-1", 2, "2-3", id="with-allocated-cpus"),
    pytest.param(T2142, "", 8, "0-7", id="allocate-whole-socket"),
    pytest.param(T2142, "", 12, "0-11", id="allocate-across-socket"),
    pytest.param(T2142, "0-1", 8, "8-15", id="whole-socket-with-partially-allocated-socket"),
    pytest.param(T2242, "0-5,16-23", 6, "8-13", id="allocate-in-the-most-idle-socket"),
    pytest.param(T2242, "0-5,16-23", 12, "6-15,24-25", id="most-cpus-on-the-same-socket"),
    pytest.param(T2242, "0-3,8-11", 4, "16-19", id="allocate-from-second-socket"),
    pytest.param(T2222, "0,2,4,8,12", 4, "10-11,14-15", id="allocate-with-less-spread-cpus"),
    pytest.param(T2222, "0,2,4,8,10,12", 6, "1,3,6-7,14-15", id="allocate-with-less-spread-cpus-2"),
    pytest.param(T2242, "0,2,4,8-10,12", 6, "16-21", id="most-spread-on-the-most-idle-socket-3"),
]  # fmt: skip

# TestTakeSpreadByPCPUs (MostAllocated) and ...WithNUMALeastAllocated
SPREAD_MOST = [
    pytest.param(T1142, "", 4, "0,2,4,6", id="allocate-on-non-numa-node"),
    pytest.param(T2142, "0,2", 4, "1,3-4,6", id="satisfied-the-partially-allocated-socket"),
    pytest.param(T2142, "0-3", 4, "8,10,12,14", id="allocate-cpus-on-full-free-socket"),
    pytest.param(T2142, "0,2", 6, "1,3-7", id="same-socket-and-overlapped-cores"),
]
SPREAD_LEAST = [
    pytest.param(T1142, "", 4, "0,2,4,6", id="allocate-on-non-numa-node"),
    pytest.param(T2142, "0,2", 4, "8,10,12,14", id="satisfied-the-partially-allocated-socket"),
    pytest.param(T2142, "0-3", 4, "8,10,12,14", id="allocate-cpus-on-full-free-socket"),
    pytest.param(T2142, "0,2", 6, "8-12,14", id="same-socket-and-overlapped-cores"),
]

# TestTakeCPUsWithExclusivePolicy: (topology, allocated, their policy, bind, own policy,
# needed, want); defaults as upstream: allocated PCPULevel, own PCPULevel, SpreadByPCPUs.
PCPU, NUMA, NONE = "PCPULevel", "NUMANodeLevel", "None"
SPREAD, FULL = "SpreadByPCPUs", "FullPCPUs"
EXCLUSIVE = [
    pytest.param(T2142, "0,2", PCPU, SPREAD, PCPU, 4, "8,10,12,14",
                 id="full-free-socket-with-pcpu-level"),
    pytest.param(T2142, "", PCPU, SPREAD, PCPU, 10, "0-4,6,8,10,12,14",
                 id="overlapped-cpus-with-pcpu-level"),
    pytest.param(T2182, "0,2", PCPU, SPREAD, PCPU, 4, "4,6,8,10",
                 id="large-partially-allocated-socket-with-pcpu-level"),
    pytest.param(T2182, "0,2", PCPU, SPREAD, NONE, 4, "1,3-4,6",
                 id="none-exclusive-policy"),
    pytest.param(T2142, "0,2", NUMA, SPREAD, NUMA, 4, "8,10,12,14",
                 id="full-free-socket-with-numa-node-level"),
    pytest.param(T2142, "0,2", NUMA, SPREAD, NONE, 4, "1,3-4,6",
                 id="partially-allocated-socket-without-numa-node-level"),
    pytest.param(T2142, "0,2", NUMA, FULL, NUMA, 4, "8-11",
                 id="full-free-socket-with-numa-node-level-and-pcpus"),
    pytest.param(T2142, "0,2", NUMA, FULL, NONE, 4, "4-7",
                 id="partially-allocated-socket-without-numa-node-level-and-pcpus"),
]  # fmt: skip
