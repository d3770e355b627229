"""node_cpu_state reads the mirror into CPU states in two queries."""

from __future__ import annotations

import pytest

from tests.factories import (
    ClusterFactory,
    NodeFactory,
    NodeTopologyFactory,
    PodAllocationFactory,
    PodFactory,
    ReservationFactory,
    koordinator_node,
)
from topology.choices import CPUState, Flavour
from topology.models import Node, NodeCPUReservation
from topology.services.mirror.cpu_state import (
    MISSING_DETAIL,
    NO_TOPOLOGY,
    HolderKind,
    node_cpu_state,
)

pytestmark = pytest.mark.django_db


def loaded(node: Node) -> Node:
    return Node.objects.select_related("topology", "cpu_reservation").get(pk=node.pk)


@pytest.fixture
def node():
    cluster = ClusterFactory()
    node = koordinator_node(cluster, kubelet_reserved_cpus="0,8", cpu_manager_policy="static")
    NodeCPUReservation.objects.create(
        node=node, reserved_cpus="7", resolved_cpus="7,15", apply_policy="ReservedCPUsOnly"
    )
    web = PodFactory(node=node, name="web-0")
    PodAllocationFactory(pod=web, cpuset="1,9", source="koordinator")
    PodAllocationFactory(pod=web, cpuset="1,9", source="kubelet", numa_resources={})
    done = PodFactory(node=node, name="job-0", phase="Succeeded")
    PodAllocationFactory(pod=done, cpuset="2,10")
    shared = PodFactory(node=node, name="frontend-0", qos_class="Burstable")
    PodAllocationFactory(pod=shared, cpuset="", numa_resources={"1": {"cpu": 1500}})
    ReservationFactory(node=node, name="resv-a", cpuset="3,11")
    ReservationFactory(node=node, name="resv-gone", phase="Succeeded", cpuset="4,12")
    return node


def test_every_cpu_gets_its_state_and_holder(node, django_assert_max_num_queries):
    node = loaded(node)
    with django_assert_max_num_queries(2):
        state = node_cpu_state(node=node)
    by_id = {cpu.id: cpu for cpu in state.cpus}
    assert len(state.cpus) == 16 and state.missing_detail == ""
    assert by_id[0].state is CPUState.RESERVED and by_id[0].holder.kind is HolderKind.KUBELET
    assert by_id[15].holder.kind is HolderKind.NODE_ANNOTATION
    assert "ReservedCPUsOnly" in by_id[15].holder.detail
    assert by_id[9].state is CPUState.EXCLUSIVE
    assert by_id[9].holder.name == "team/web-0" and by_id[9].holder.source == "koordinator+kubelet"
    assert by_id[2].state is CPUState.FREE  # a finished pod holds nothing
    assert by_id[11].state is CPUState.RESERVATION and by_id[11].holder.name == "resv-a"
    assert by_id[12].state is CPUState.FREE  # a Succeeded reservation holds nothing
    shared = [cpu.id for cpu in state.cpus if cpu.state is CPUState.SHARED]
    assert shared == [6, 14]  # zone 1's last core, for 1.5 CPUs of unpinned requests
    assert state.conflicts == ()


def test_a_non_exclusive_system_qos_cpuset_is_a_note_and_an_exclusive_one_is_reserved():
    cluster = ClusterFactory()
    shared = koordinator_node(
        cluster, "a", koordlet={"system_qos_cpus": "5", "system_qos_exclusive": False}
    )
    exclusive = koordinator_node(
        cluster, "b", koordlet={"system_qos_cpus": "5", "system_qos_exclusive": True}
    )
    cpu5 = {c.id: c for c in node_cpu_state(node=loaded(shared)).cpus}[5]
    assert cpu5.state is CPUState.FREE and "system-QoS" in cpu5.notes[0]
    cpu5 = {c.id: c for c in node_cpu_state(node=loaded(exclusive)).cpus}[5]
    assert cpu5.state is CPUState.RESERVED and cpu5.holder.kind is HolderKind.SYSTEM_QOS


@pytest.mark.parametrize("flavour", [Flavour.UPSTREAM_V1ALPHA2, Flavour.CRANE])
def test_flavours_without_cpu_detail_say_why(flavour):
    topology = NodeTopologyFactory(flavour=flavour)
    state = node_cpu_state(node=loaded(topology.node))
    assert not state.has_detail
    assert state.missing_detail == MISSING_DETAIL[flavour]
    assert "cannot be drawn" in state.missing_detail


def test_a_node_without_nrt_says_so():
    state = node_cpu_state(node=loaded(NodeFactory()))
    assert state.missing_detail == NO_TOPOLOGY and state.cpus == ()
