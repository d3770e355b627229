"""kubelet cpumanager test topologies (``policy_test.go`` / ``cpu_assignment_test.go``) as data.

Each fixture is a tuple of ``(cpu_id, core_id, socket_id, numa_id)`` rows with
kubelet's own (machine-unique) core ids, so tie-breaking matches upstream.
Regular machines are generated from their lscpu shape; the irregular ones are
written out core by core.
"""

from __future__ import annotations

Row = tuple[int, int, int, int]


def _smt_pairs(cores: int, socket_of: dict[int, int], numa_of: dict[int, int]) -> tuple[Row, ...]:
    """CPU i and i+cores are the two threads of core i (Linux numbering)."""
    rows = [(c, c, socket_of[c], numa_of[c]) for c in range(cores)]
    rows += [(c + cores, c, socket_of[c], numa_of[c]) for c in range(cores)]
    return tuple(rows)


def _per_block(cores: int, block: int) -> dict[int, int]:
    return {c: c // block for c in range(cores)}


# 1 socket, 1 NUMA node, 4 cores x 2 threads: cores {0,4} {1,5} {2,6} {3,7}.
TOPO_SINGLE_SOCKET_HT: tuple[Row, ...] = _smt_pairs(4, _per_block(4, 4), _per_block(4, 4))

# 2 sockets = 2 NUMA nodes, 6 cores x 2 threads; even cores on socket 0: {0,6} {2,8} {4,10}.
TOPO_DUAL_SOCKET_HT: tuple[Row, ...] = _smt_pairs(
    6, {c: c % 2 for c in range(6)}, {c: c % 2 for c in range(6)}
)

# 2 sockets = 2 NUMA nodes, 8 single-thread cores: 0-3 on socket 0, 4-7 on socket 1.
TOPO_DUAL_SOCKET_NO_HT: tuple[Row, ...] = tuple((c, c, c // 4, c // 4) for c in range(8))

# 3 sockets, every CPU on NUMA node 0 (upstream leaves NUMANodeID unset), 9 cores x 2.
TOPO_TRIPLE_SOCKET_HT: tuple[Row, ...] = tuple(
    (cpu, cpu // 2, {0: 1, 1: 1, 2: 1, 3: 0, 4: 0, 5: 0, 6: 2, 7: 2, 8: 2}[cpu // 2], 0)
    for cpu in range(18)
)

# Dual Xeon Gold 6230: 2 sockets, 4 NUMA nodes
# (0-9,40-49 | 10-19,50-59 | 20-29,60-69 | 30-39,70-79).
TOPO_DUAL_SOCKET_MULTI_NUMA_PER_SOCKET_HT: tuple[Row, ...] = _smt_pairs(
    40, _per_block(40, 20), _per_block(40, 10)
)

# The same machine with sockets and NUMA nodes flipped: 4 sockets, 2 NUMA nodes.
FAKE_TOPO_MULTI_SOCKET_DUAL_SOCKET_PER_NUMA_HT: tuple[Row, ...] = _smt_pairs(
    40, _per_block(40, 10), _per_block(40, 20)
)

# Dual AMD EPYC 7742 (NPS=4): 2 sockets, 8 NUMA nodes, 128 cores x 2 (i, i+128).
TOPO_DUAL_SOCKET_MULTI_NUMA_PER_SOCKET_HT_LARGE: tuple[Row, ...] = _smt_pairs(
    128, _per_block(128, 64), _per_block(128, 16)
)

# Xeon Phi KNL (SNC4): 4 sockets = 4 NUMA nodes, 72 cores x 4 threads. Upstream core ids
# are irregular (some exceed 71), so each core is listed: (core_id, socket, threads).
_QUAD_CORES: tuple[tuple[int, int, tuple[int, ...]], ...] = (
    (0, 0, (0, 169, 109, 229)),
    (1, 0, (50, 170, 110, 230)),
    (64, 0, (1, 25, 13, 38)),
    (65, 0, (2, 26, 14, 39)),
    (72, 0, (9, 33, 21, 46)),
    (73, 0, (10, 34, 22, 47)),
    (8, 0, (57, 177, 117, 237)),
    (9, 0, (58, 178, 118, 238)),
    (24, 0, (71, 191, 131, 251)),
    (25, 0, (72, 192, 132, 252)),
    (32, 0, (79, 199, 139, 259)),
    (33, 0, (80, 200, 140, 260)),
    (40, 0, (87, 207, 147, 267)),
    (41, 0, (88, 208, 148, 268)),
    (48, 0, (95, 215, 155, 275)),
    (49, 0, (96, 216, 156, 276)),
    (56, 0, (103, 223, 163, 283)),
    (57, 0, (104, 224, 164, 284)),
    (66, 1, (3, 27, 15, 40)),
    (67, 1, (4, 28, 16, 41)),
    (74, 1, (11, 35, 23, 48)),
    (75, 1, (12, 36, 24, 49)),
    (2, 1, (51, 171, 111, 231)),
    (3, 1, (52, 172, 112, 232)),
    (10, 1, (59, 179, 119, 239)),
    (11, 1, (60, 180, 120, 240)),
    (18, 1, (65, 185, 125, 245)),
    (19, 1, (66, 186, 126, 246)),
    (26, 1, (73, 193, 133, 253)),
    (27, 1, (74, 194, 134, 254)),
    (34, 1, (81, 201, 141, 261)),
    (35, 1, (82, 202, 142, 262)),
    (42, 1, (89, 209, 149, 269)),
    (43, 1, (90, 210, 150, 270)),
    (50, 1, (97, 217, 157, 277)),
    (51, 1, (98, 218, 158, 278)),
    (68, 2, (5, 29, 17, 42)),
    (69, 2, (6, 30, 18, 43)),
    (4, 2, (53, 173, 113, 233)),
    (5, 2, (54, 174, 114, 234)),
    (12, 2, (61, 181, 121, 241)),
    (13, 2, (62, 182, 122, 242)),
    (20, 2, (67, 187, 127, 247)),
    (21, 2, (68, 188, 128, 248)),
    (28, 2, (75, 195, 135, 255)),
    (29, 2, (76, 196, 136, 256)),
    (36, 2, (83, 203, 143, 263)),
    (37, 2, (84, 204, 144, 264)),
    (44, 2, (91, 211, 151, 271)),
    (45, 2, (92, 212, 152, 272)),
    (52, 2, (99, 219, 159, 279)),
    (53, 2, (100, 220, 160, 280)),
    (60, 2, (105, 225, 165, 285)),
    (61, 2, (106, 226, 166, 286)),
    (70, 3, (7, 31, 19, 44)),
    (71, 3, (8, 32, 20, 45)),
    (63, 3, (37, 168, 108, 228)),
    (62, 3, (107, 227, 167, 287)),
    (6, 3, (55, 175, 115, 235)),
    (7, 3, (56, 176, 116, 236)),
    (14, 3, (63, 183, 123, 243)),
    (15, 3, (64, 184, 124, 244)),
    (22, 3, (69, 189, 129, 249)),
    (23, 3, (70, 190, 130, 250)),
    (30, 3, (77, 197, 137, 257)),
    (31, 3, (78, 198, 138, 258)),
    (38, 3, (85, 205, 145, 265)),
    (39, 3, (86, 206, 146, 266)),
    (46, 3, (93, 213, 153, 273)),
    (47, 3, (94, 214, 154, 274)),
    (54, 3, (101, 221, 161, 281)),
    (55, 3, (102, 222, 162, 282)),
)
TOPO_QUAD_SOCKET_FOUR_WAY_HT: tuple[Row, ...] = tuple(
    (cpu, core, socket, socket) for core, socket, threads in _QUAD_CORES for cpu in threads
)

# formats.md section 6: 2 sockets = 2 NUMA nodes, 4 cores x 2 threads each;
# NUMA 0 cores {0,8} {1,9} {2,10} {3,11}, NUMA 1 cores {4,12} .. {7,15}.
TOPO_FORMATS_MD_DUAL_SOCKET: tuple[Row, ...] = _smt_pairs(8, _per_block(8, 4), _per_block(8, 4))

# kubelet's topology_hints_test.go machine: cAdvisor core ids repeat per socket
# (0,1,2 on both), so kubelet renames cores to their lowest thread id.
TOPO_HINTS_TEST_MACHINE: tuple[Row, ...] = tuple(
    row
    for socket, cores in ((0, ((0, 6), (1, 7), (2, 8))), (1, ((3, 9), (4, 10), (5, 11))))
    for core_id, threads in enumerate(cores)
    for row in ((threads[0], core_id, socket, socket), (threads[1], core_id, socket, socket))
)


def parse_cpuset(text: str) -> frozenset[int]:
    """``"0-3,8,10-11"`` -> ids, as kubelet's ``cpuset.Parse``; ``""`` is empty."""
    cpus: set[int] = set()
    for part in filter(None, text.split(",")):
        low, _, high = part.partition("-")
        cpus.update(range(int(low), int(high or low) + 1))
    return frozenset(cpus)
