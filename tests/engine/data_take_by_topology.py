"""kubelet ``cpu_assignment_test.go`` tables as data.

Each case: ``(description, topology, available, count, expected)``; cpusets are
kubelet's text form. ``expected=None`` means kubelet returns an error (not
enough CPUs). Distributed cases carry the ``cpuGroupSize`` too. The
PreferAlignByUncoreCache rows, which need uncore cache tables, are in
``test_cpu_manager_options.py``.
"""

from __future__ import annotations

from tests.engine.data_cpu_topologies import (
    FAKE_TOPO_MULTI_SOCKET_DUAL_SOCKET_PER_NUMA_HT as FAKE_MULTI_SOCKET,
)
from tests.engine.data_cpu_topologies import (
    TOPO_DUAL_SOCKET_HT as DUAL_HT,
)
from tests.engine.data_cpu_topologies import (
    TOPO_DUAL_SOCKET_MULTI_NUMA_PER_SOCKET_HT as MULTI_NUMA,
)
from tests.engine.data_cpu_topologies import (
    TOPO_DUAL_SOCKET_MULTI_NUMA_PER_SOCKET_HT_LARGE as MULTI_NUMA_LARGE,
)
from tests.engine.data_cpu_topologies import (
    TOPO_DUAL_SOCKET_NO_HT as DUAL_NO_HT,
)
from tests.engine.data_cpu_topologies import (
    TOPO_QUAD_SOCKET_FOUR_WAY_HT as QUAD,
)
from tests.engine.data_cpu_topologies import (
    TOPO_SINGLE_SOCKET_HT as SINGLE_HT,
)
from tests.engine.data_cpu_topologies import (
    TOPO_TRIPLE_SOCKET_HT as TRIPLE_HT,
)
from tests.engine.data_cpu_topologies import Row

Case = tuple[str, tuple[Row, ...], str, int, str | None]
GroupCase = tuple[str, tuple[Row, ...], str, int, int, str | None]

# commonTakeByTopologyTestCases: shared by the packed and the distributed tests.
COMMON: list[Case] = [
    ("take more cpus than are available from single socket with HT", SINGLE_HT, "0,2,4,6", 5, None),
    ("take zero cpus from single socket with HT", SINGLE_HT, "0-7", 0, ""),
    ("take one cpu from single socket with HT", SINGLE_HT, "0-7", 1, "0"),
    (
        "take one cpu from single socket with HT, some cpus are taken",
        SINGLE_HT,
        "1,3,5,6,7",
        1,
        "6",
    ),
    ("take two cpus from single socket with HT", SINGLE_HT, "0-7", 2, "0,4"),
    ("take all cpus from single socket with HT", SINGLE_HT, "0-7", 8, "0-7"),
    (
        "take two cpus from single socket with HT, only one core totally free",
        SINGLE_HT,
        "0,1,2,3,6",
        2,
        "2,6",
    ),
    ("take a socket of cpus from dual socket with HT", DUAL_HT, "0-11", 6, "0,2,4,6,8,10"),
    (
        "take a socket of cpus from dual socket with multi-numa-per-socket with HT",
        MULTI_NUMA,
        "0-79",
        40,
        "0-19,40-59",
    ),
    (
        "take a NUMA node of cpus from dual socket with multi-numa-per-socket with HT",
        MULTI_NUMA,
        "0-79",
        20,
        "0-9,40-49",
    ),
    (
        "take a NUMA node of cpus from dual socket with multi-numa-per-socket with HT, "
        "with 1 NUMA node already taken",
        MULTI_NUMA,
        "10-39,50-79",
        20,
        "10-19,50-59",
    ),
    (
        "take a socket and a NUMA node of cpus from dual socket with multi-numa-per-socket with HT",
        MULTI_NUMA,
        "0-79",
        60,
        "0-29,40-69",
    ),
    (
        "take a socket and a NUMA node of cpus from dual socket with multi-numa-per-socket "
        "with HT, a core taken",
        MULTI_NUMA,
        "1-39,41-79",
        60,
        "10-39,50-79",
    ),
]

# TestTakeByTopologyNUMAPacked extras.
PACKED_ONLY: list[Case] = [
    (
        "take one cpu from dual socket with HT - core from Socket 0",
        DUAL_HT,
        "1,2,3,4,5,7,8,9,10,11",
        1,
        "2",
    ),
    (
        "allocate 4 full cores with 3 coming from the first NUMA node (filling it up) and 1 coming "
        "from the second NUMA node",
        DUAL_HT,
        "0-11",
        8,
        "0,6,2,8,4,10,1,7",
    ),
    (
        "allocate 32 full cores with 30 coming from the first 3 NUMA nodes (filling them up) and 2 "
        "coming from the fourth NUMA node",
        MULTI_NUMA,
        "0-79",
        64,
        "0-29,40-69,30,31,70,71",
    ),
]

# TestTakeByTopologyWithSpreadPhysicalCPUsPreferredOption (distribute-cpus-across-cores).
SPREAD: list[Case] = [
    ("take a socket of cpus from single socket with HT, 3 cpus", SINGLE_HT, "0-7", 3, "0,1,2"),
    ("take a socket of cpus from dual socket with HT, 2 cpus", DUAL_HT, "0-11", 2, "0,2"),
    ("take a socket of cpus from dual socket with HT, 3 cpus", DUAL_HT, "0-11", 3, "0,2,4"),
    ("take a socket of cpus from dual socket with HT, 6 cpus", DUAL_HT, "0-11", 6, "0,2,4,6,8,10"),
    ("take cpus from dual socket with HT, 8 cpus", DUAL_HT, "0-11", 8, "0,2,4,6,8,10,1,3"),
    ("take a socket of cpus from dual socket without HT, 2 cpus", DUAL_NO_HT, "0-7", 2, "0,1"),
    (
        "take a socket of cpus from dual socket with multi numa per socket and HT, 12 cpus",
        MULTI_NUMA,
        "0-79",
        8,
        "0-7",
    ),
    (
        "take a socket of cpus from quad socket four way with HT, 12 cpus",
        QUAD,
        "0-287",
        12,
        "0-2,9-10,13-14,21-22,25-26,33",
    ),
]

# commonTakeByTopologyExtendedTestCases (cpuGroupSize 1 unless stated), then
# TestTakeByTopologyNUMADistributed extras.
DISTRIBUTED: list[GroupCase] = [
    *((name, topo, avail, count, 1, expected) for name, topo, avail, count, expected in COMMON),
    (
        "allocate 4 full cores with 2 distributed across each NUMA node",
        DUAL_HT,
        "0-11",
        8,
        1,
        "0,6,2,8,1,7,3,9",
    ),
    (
        "allocate 32 full cores with 8 distributed across each NUMA node",
        MULTI_NUMA,
        "0-79",
        64,
        1,
        "0-7,10-17,20-27,30-37,40-47,50-57,60-67,70-77",
    ),
    (
        "allocate 24 full cores with 8 distributed across the first 3 NUMA nodes",
        MULTI_NUMA,
        "0-79",
        48,
        1,
        "0-7,10-17,20-27,40-47,50-57,60-67",
    ),
    (
        "allocate 24 full cores with 8 distributed across the first 3 NUMA nodes (taking all but 2 "
        "from the first NUMA node)",
        MULTI_NUMA,
        "1-29,32-39,41-69,72-79",
        48,
        1,
        "1-8,10-17,20-27,41-48,50-57,60-67",
    ),
    (
        "allocate 24 full cores with 8 distributed across the last 3 NUMA nodes (even though all 8 "
        "could be allocated from the first NUMA node)",
        MULTI_NUMA,
        "2-29,31-39,42-69,71-79",
        48,
        1,
        "10-17,20-27,31-38,50-57,60-67,71-78",
    ),
    (
        "allocate 8 full cores with 2 distributed across each NUMA node",
        MULTI_NUMA,
        "0-2,10-12,20-22,30-32,40-41,50-51,60-61,70-71",
        16,
        1,
        "0-1,10-11,20-21,30-31,40-41,50-51,60-61,70-71",
    ),
    (
        "take one cpu from dual socket with HT - core from Socket 0 (distributed)",
        DUAL_HT,
        "1,2,3,4,5,7,8,9,10,11",
        1,
        1,
        "1",
    ),
    (
        "take one cpu from dual socket with HT - core from Socket 0 - cpuGroupSize 2",
        DUAL_HT,
        "1,2,3,4,5,7,8,9,10,11",
        1,
        2,
        "2",
    ),
    (
        "allocate 13 full cores distributed across the first 2 NUMA nodes",
        MULTI_NUMA,
        "0-79",
        26,
        1,
        "0-6,10-16,40-45,50-55",
    ),
    (
        "allocate 13 full cores distributed across the first 2 NUMA nodes (cpuGroupSize 2)",
        MULTI_NUMA,
        "0-79",
        26,
        2,
        "0-6,10-15,40-46,50-55",
    ),
    (
        "allocate 31 full cores with 15 CPUs distributed across each NUMA node and 1 CPU spilling "
        "over to each of NUMA 0, 1",
        MULTI_NUMA,
        "0-79",
        62,
        1,
        "0-7,10-17,20-27,30-37,40-47,50-57,60-66,70-76",
    ),
    (
        "allocate 31 full cores with 14 CPUs distributed across each NUMA node and 2 CPUs spilling "
        "over to each of NUMA 0, 1, 2 (cpuGroupSize 2)",
        MULTI_NUMA,
        "0-79",
        62,
        2,
        "0-7,10-17,20-27,30-36,40-47,50-57,60-67,70-76",
    ),
    (
        "allocate 31 full cores with 15 CPUs distributed across each NUMA node and 1 CPU spilling "
        "over to each of NUMA 2, 3 (to keep balance)",
        MULTI_NUMA,
        "0-8,10-18,20-39,40-48,50-58,60-79",
        62,
        1,
        "0-7,10-17,20-27,30-37,40-46,50-56,60-67,70-77",
    ),
    (
        "allocate 31 full cores with 14 CPUs distributed across each NUMA node and 2 CPUs spilling "
        "over to each of NUMA 0, 2, 3 (to keep balance with cpuGroupSize 2)",
        MULTI_NUMA,
        "0-8,10-18,20-39,40-48,50-58,60-79",
        62,
        2,
        "0-7,10-16,20-27,30-37,40-47,50-56,60-67,70-77",
    ),
    (
        "ensure bestRemainder chosen with NUMA nodes that have enough CPUs to satisfy the request",
        MULTI_NUMA,
        "0-3,10-13,20-23,30-36,40-43,50-53,60-63,70-76",
        34,
        1,
        "0-3,10-13,20-23,30-34,40-43,50-53,60-63,70-74",
    ),
    (
        "ensure previous failure encountered on live machine has been fixed (1/1)",
        MULTI_NUMA_LARGE,
        "0,128,30,31,158,159,43-47,171-175,62,63,190,191,75-79,203-207,94,96,222,223,101-111,"
        "229-239,126,127,254,255",
        28,
        1,
        "43-47,75-79,96,101-105,171-174,203-206,229-232",
    ),
]

# Accumulator orderings: (description, topology, available, expected ids in order).
OrderCase = tuple[str, tuple[Row, ...], str, list[int]]

FREE_SOCKETS: list[OrderCase] = [  # TestCPUAccumulatorFreeSockets (compared sorted)
    ("single socket HT, 1 socket free", SINGLE_HT, "0-7", [0]),
    ("single socket HT, 0 sockets free", SINGLE_HT, "1-7", []),
    ("dual socket HT, 2 sockets free", DUAL_HT, "0-11", [0, 1]),
    ("dual socket HT, 1 socket free", DUAL_HT, "0-9,11", [1]),
    ("dual socket HT, 0 sockets free", DUAL_HT, "0,2-9,11", []),
    ("dual socket, multi numa per socket, HT, 2 sockets free", MULTI_NUMA, "0-79", [0, 1]),
    ("dual socket, multi numa per socket, HT, 1 sockets free", MULTI_NUMA, "1-79", [1]),
    ("dual socket, multi numa per socket, HT, 0 sockets free", MULTI_NUMA, "1-78", []),
    (
        "dual numa, multi socket per per socket, HT, 4 sockets free",
        FAKE_MULTI_SOCKET,
        "0-79",
        [0, 1, 2, 3],
    ),
    (
        "dual numa, multi socket per per socket, HT, 3 sockets free",
        FAKE_MULTI_SOCKET,
        "0-19,21-79",
        [0, 1, 3],
    ),
    (
        "dual numa, multi socket per per socket, HT, 2 sockets free",
        FAKE_MULTI_SOCKET,
        "0-59,61-78",
        [0, 1],
    ),
    (
        "dual numa, multi socket per per socket, HT, 1 sockets free",
        FAKE_MULTI_SOCKET,
        "1-19,21-38,41-60,61-78",
        [1],
    ),
    (
        "dual numa, multi socket per per socket, HT, 0 sockets free",
        FAKE_MULTI_SOCKET,
        "0-40,42-49,51-68,71-79",
        [],
    ),
]

FREE_NUMA_NODES: list[OrderCase] = [  # TestCPUAccumulatorFreeNUMANodes (order matters)
    ("single socket HT, 1 NUMA node free", SINGLE_HT, "0-7", [0]),
    ("single socket HT, 0 NUMA Node free", SINGLE_HT, "1-7", []),
    ("dual socket HT, 2 NUMA Node free", DUAL_HT, "0-11", [0, 1]),
    ("dual socket HT, 1 NUMA Node free", DUAL_HT, "0-9,11", [1]),
    ("dual socket HT, 0 NUMA node free", DUAL_HT, "0,2-9,11", []),
    ("dual socket, multi numa per socket, HT, 4 NUMA Node free", MULTI_NUMA, "0-79", [0, 1, 2, 3]),
    ("dual socket, multi numa per socket, HT, 3 NUMA node free", MULTI_NUMA, "1-79", [1, 2, 3]),
    ("dual socket, multi numa per socket, HT, 2 NUMA node free", MULTI_NUMA, "1-9,11-79", [2, 3]),
    (
        "dual socket, multi numa per socket, HT, 1 NUMA node free",
        MULTI_NUMA,
        "1-9,11-59,61-79",
        [3],
    ),
    ("dual socket, multi numa per socket, HT, 0 NUMA node free", MULTI_NUMA, "1-9,11-59,61-78", []),
    (
        "dual numa, multi socket per per socket, HT, 2 NUMA node free",
        FAKE_MULTI_SOCKET,
        "0-79",
        [0, 1],
    ),
    (
        "dual numa, multi socket per per socket, HT, 1 NUMA node free",
        FAKE_MULTI_SOCKET,
        "0-9,11-79",
        [1],
    ),
    (
        "dual numa, multi socket per per socket, HT, 0 sockets free",
        FAKE_MULTI_SOCKET,
        "0-9,11-59,61-79",
        [],
    ),
]

FREE_CORES: list[OrderCase] = [  # TestCPUAccumulatorFreeCores
    ("single socket HT, 4 cores free", SINGLE_HT, "0-7", [0, 1, 2, 3]),
    ("single socket HT, 3 cores free", SINGLE_HT, "0,1,2,4,5,6", [0, 1, 2]),
    ("single socket HT, 3 cores free (1 partially consumed)", SINGLE_HT, "0-6", [0, 1, 2]),
    ("single socket HT, 0 cores free", SINGLE_HT, "", []),
    ("single socket HT, 0 cores free (4 partially consumed)", SINGLE_HT, "0-3", []),
    ("dual socket HT, 6 cores free", DUAL_HT, "0-11", [0, 2, 4, 1, 3, 5]),
    (
        "dual socket HT, 5 cores free (1 consumed from socket 0)",
        DUAL_HT,
        "1-5,7-11",
        [2, 4, 1, 3, 5],
    ),
    (
        "dual socket HT, 4 cores free (1 consumed from each socket)",
        DUAL_HT,
        "2-5,8-11",
        [2, 4, 3, 5],
    ),
]

FREE_CPUS: list[OrderCase] = [  # TestCPUAccumulatorFreeCPUs
    ("single socket HT, 8 cpus free", SINGLE_HT, "0-7", [0, 4, 1, 5, 2, 6, 3, 7]),
    ("single socket HT, 5 cpus free", SINGLE_HT, "3-7", [4, 5, 6, 3, 7]),
    ("dual socket HT, 12 cpus free", DUAL_HT, "0-11", [0, 6, 2, 8, 4, 10, 1, 7, 3, 9, 5, 11]),
    ("dual socket HT, 11 cpus free", DUAL_HT, "1-11", [6, 2, 8, 4, 10, 1, 7, 3, 9, 5, 11]),
    ("dual socket HT, 10 cpus free", DUAL_HT, "1-5,7-11", [2, 8, 4, 10, 1, 7, 3, 9, 5, 11]),
    (
        "triple socket HT, 12 cpus free",
        TRIPLE_HT,
        "0-3,6-13",
        [12, 13, 0, 1, 2, 3, 6, 7, 8, 9, 10, 11],
    ),
]
