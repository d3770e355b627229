"""Stateful property test: random take/allocate/release sequences on one node.

Like sortedcontainers' stress tests, an invariant checker (``check``) runs after
every step: no CPU is handed out twice, every grant lies inside what was free
minus the reserved CPUs, and the books (free + granted) always add up to the
node. Each step also checks its own result: the exact count, whole cores under
``full-pcpus-only``, and ``allocate_cpus`` staying inside the hint's NUMA nodes
whenever enough free CPUs exist there.
"""

from __future__ import annotations

from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, precondition, rule

from scheduler_api.engine.kubelet.reference.cpu_topology import CPUTopology
from scheduler_api.engine.kubelet.reference.cpumanager import (
    StaticPolicyOptions,
    allocate_cpus,
    reserve_cpus,
    take_cpus,
)
from scheduler_api.engine.kubelet.reference.topologymanager import TopologyHint
from scheduler_api.engine.model.errors import AllocationError, SMTAlignmentError
from tests.engine.data_cpu_topologies import (
    FAKE_TOPO_MULTI_SOCKET_DUAL_SOCKET_PER_NUMA_HT,
    TOPO_DUAL_SOCKET_HT,
    TOPO_DUAL_SOCKET_MULTI_NUMA_PER_SOCKET_HT,
    TOPO_TRIPLE_SOCKET_HT,
    Row,
)


@st.composite
def regular_topologies(draw: st.DrawFn) -> tuple[Row, ...]:
    """Linux-numbered machines: threads of core c are c, c + cores, c + 2*cores, ..."""
    sockets = draw(st.integers(1, 2))
    numa_per_socket = draw(st.integers(1, 2))
    cores_per_numa = draw(st.integers(1, 4))
    threads = draw(st.integers(1, 2))
    cores = sockets * numa_per_socket * cores_per_numa
    return tuple(
        (
            core + thread * cores,
            core,
            core // (numa_per_socket * cores_per_numa),
            core // cores_per_numa,
        )
        for core in range(cores)
        for thread in range(threads)
    )


TOPOLOGIES = st.one_of(
    regular_topologies(),
    st.sampled_from(
        [
            TOPO_DUAL_SOCKET_HT,
            TOPO_TRIPLE_SOCKET_HT,
            TOPO_DUAL_SOCKET_MULTI_NUMA_PER_SOCKET_HT,
            FAKE_TOPO_MULTI_SOCKET_DUAL_SOCKET_PER_NUMA_HT,
        ]
    ),
)


@st.composite
def policy_options(draw: st.DrawFn, topology: CPUTopology) -> StaticPolicyOptions:
    """Only the combinations kubelet would start with on this machine."""
    spread = draw(st.booleans())
    full = not spread and draw(st.booleans())
    numa = not spread and draw(st.booleans())
    by_socket = topology.num_sockets <= topology.num_numa_nodes and draw(st.booleans())
    return StaticPolicyOptions(
        full_pcpus_only=full,
        distribute_cpus_across_numa=numa,
        align_by_socket=by_socket,
        distribute_cpus_across_cores=spread,
    )


def whole_cores(topology: CPUTopology, cpus: frozenset[int]) -> bool:
    return all(topology.siblings(cpu) <= cpus for cpu in cpus)


class CPUManagerMachine(RuleBasedStateMachine):
    """One node's static CPU manager under a random sequence of requests."""

    def __init__(self) -> None:
        super().__init__()
        self.topology = CPUTopology.from_cpus(TOPO_DUAL_SOCKET_HT)
        self.options = StaticPolicyOptions()
        self.reserved: frozenset[int] = frozenset()
        self.free: set[int] = set()
        self.grants: list[frozenset[int]] = []

    @initialize(rows=TOPOLOGIES, data=st.data())
    def start(self, rows: tuple[Row, ...], data: st.DataObject) -> None:
        self.topology = CPUTopology.from_cpus(rows)
        self.options = data.draw(policy_options(self.topology))
        reserve = data.draw(st.integers(0, min(2, self.topology.num_cpus - 1)))
        self.reserved = reserve_cpus(self.topology, reserve)
        self.free = set(self.topology.cpus())  # the default set still holds the reserved CPUs

    @property
    def assignable(self) -> frozenset[int]:
        return frozenset(self.free) - self.reserved

    def _physical(self) -> int:
        near_reserved = frozenset().union(*(self.topology.siblings(c) for c in self.reserved))
        return len(self.assignable - near_reserved)

    def _expect_refusal(self, error: AllocationError, count: int) -> None:
        per_core = self.topology.cpus_per_core
        if isinstance(error, SMTAlignmentError):
            assert self.options.full_pcpus_only
            assert count % per_core != 0 or count > self._physical(), str(error)
        else:
            assert count > len(self.assignable), str(error)

    def _grant(
        self, cpus: frozenset[int], count: int, before: frozenset[int], may_split: bool = False
    ) -> None:
        assert len(cpus) == count, f"asked {count}, got {sorted(cpus)}"
        assert cpus <= before, f"{sorted(cpus - before)} were not assignable"
        if self.options.full_pcpus_only and not may_split:
            assert whole_cores(self.topology, cpus), f"{sorted(cpus)} splits a core"
        self.free -= cpus
        self.grants.append(cpus)
        self.check()

    @rule(data=st.data())
    def take(self, data: st.DataObject) -> None:
        count = data.draw(st.integers(0, self.topology.num_cpus + 1), label="count")
        before = self.assignable
        try:
            cpus = take_cpus(
                self.topology, self.free, count, options=self.options, reserved=self.reserved
            )
        except AllocationError as error:
            self._expect_refusal(error, count)
            return
        self._grant(cpus, count, before)

    @rule(data=st.data())
    def allocate(self, data: st.DataObject) -> None:
        count = data.draw(st.integers(1, self.topology.num_cpus), label="count")
        nodes = data.draw(
            st.none() | st.frozensets(st.sampled_from(self.topology.numa_nodes()), min_size=1),
            label="hint",
        )
        before = self.assignable
        try:
            cpus = allocate_cpus(
                self.topology,
                self.free,
                count,
                TopologyHint(nodes, True),
                options=self.options,
                reserved=self.reserved,
            )
        except AllocationError as error:
            self._expect_refusal(error, count)
            return
        short = False
        if nodes is not None:
            inside = self.topology.cpus_in_numa_nodes(nodes)
            if self.options.align_by_socket:
                inside = self.topology.cpus_in_sockets(self.topology.sockets_in_numa_nodes(nodes))
            short = len(inside & before) < count
            if not short:
                assert cpus <= inside, f"{sorted(cpus - inside)} left the hint {sorted(nodes)}"
        # kubelet's allocateCPUs takes *every* aligned CPU when the hint is too small, so a
        # reserved CPU's sibling in the hint can split a core even under full-pcpus-only.
        self._grant(cpus, count, before, may_split=short and bool(self.reserved))

    @precondition(lambda self: bool(self.grants))
    @rule(data=st.data())
    def release(self, data: st.DataObject) -> None:
        index = data.draw(st.integers(0, len(self.grants) - 1), label="grant")
        self.free |= self.grants.pop(index)
        self.check()

    @invariant()
    def check(self) -> None:
        """No CPU granted twice, none reserved, and free + granted is the whole node."""
        granted = [cpu for grant in self.grants for cpu in grant]
        assert len(granted) == len(set(granted)), "a CPU was handed out twice"
        assert not set(granted) & self.reserved, "a reserved CPU was handed out"
        assert not set(granted) & self.free, "a granted CPU is still free"
        assert set(granted) | self.free == self.topology.cpus(), "CPUs went missing"


CPUManagerMachine.TestCase.settings = settings(
    max_examples=80,
    stateful_step_count=20,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
TestCPUManagerSequences = CPUManagerMachine.TestCase
