"""The CPU-state rules, on plain inputs (no database)."""

from __future__ import annotations

from tests.factories import hyperthreaded
from topology.choices import CPUState
from topology.domain.cpu_classify import (
    Claim,
    CPUStateInputs,
    Holder,
    HolderKind,
    SharedClaim,
    classify_cpus,
    pod_code,
)

CPUS = tuple(hyperthreaded(zones=2, cores_per_zone=4))  # 16 CPUs, zone 0: 0-3 + 8-11


def pod(name: str) -> Holder:
    return Holder(HolderKind.POD, name, source="koordinator")


def states(result) -> dict[int, CPUState]:
    return {cpu.id: cpu.state for cpu in result.cpus}


def test_every_cpu_is_free_when_nothing_holds_it():
    result = classify_cpus("n", CPUStateInputs(cpus=CPUS))
    assert set(states(result).values()) == {CPUState.FREE}
    assert result.holders == () and result.conflicts == ()


def test_a_pinned_pod_holds_its_cpus_exclusively_with_a_code():
    inputs = CPUStateInputs(cpus=CPUS, pods=(Claim(pod("ns/web"), frozenset({2, 10})),))
    result = classify_cpus("n", inputs)
    held = [cpu for cpu in result.cpus if cpu.state is CPUState.EXCLUSIVE]
    assert [cpu.id for cpu in held] == [2, 10]
    assert {cpu.holder.name for cpu in held} == {"ns/web"}
    assert held[0].holder.code == "A"


def test_pods_are_coded_in_the_order_of_their_lowest_cpu():
    inputs = CPUStateInputs(
        cpus=CPUS,
        pods=(Claim(pod("ns/late"), frozenset({6})), Claim(pod("ns/early"), frozenset({1}))),
    )
    result = classify_cpus("n", inputs)
    assert [(h.code, h.name) for h in result.holders] == [("A", "ns/early"), ("B", "ns/late")]


def test_codes_run_past_z_like_spreadsheet_columns():
    assert [pod_code(i) for i in (0, 25, 26, 27, 701, 702)] == ["A", "Z", "AA", "AB", "ZZ", "AAA"]


def test_reserved_cpus_are_reserved_and_name_their_reserver():
    kubelet = Holder(HolderKind.KUBELET, "kubelet reservedSystemCPUs", "x")
    result = classify_cpus(
        "n", CPUStateInputs(cpus=CPUS, reserved=(Claim(kubelet, frozenset({0, 8})),))
    )
    assert states(result)[0] is CPUState.RESERVED
    assert result.cpus[0].holder == kubelet


def test_a_pod_inside_its_reservation_wins_and_the_rest_stays_with_the_reservation():
    reservation = Holder(HolderKind.RESERVATION, "resv-web", "r")
    inputs = CPUStateInputs(
        cpus=CPUS,
        pods=(Claim(pod("ns/web"), frozenset({0, 8})),),
        reservations=(Claim(reservation, frozenset({0, 1, 8, 9})),),
    )
    result = classify_cpus("n", inputs)
    by_id = {cpu.id: cpu for cpu in result.cpus}
    assert by_id[0].state is CPUState.EXCLUSIVE
    assert "inside Reservation resv-web" in by_id[0].notes
    assert by_id[1].state is CPUState.RESERVATION and by_id[1].holder == reservation
    assert result.conflicts == ()


def test_two_pods_on_one_cpu_is_a_reported_conflict():
    inputs = CPUStateInputs(
        cpus=CPUS,
        pods=(Claim(pod("ns/a"), frozenset({3})), Claim(pod("ns/b"), frozenset({3, 4}))),
    )
    result = classify_cpus("n", inputs)
    assert any("CPU 3" in line for line in result.conflicts)
    assert {cpu.id: cpu.holder.name for cpu in result.cpus if cpu.holder}[3] == "ns/a"


def test_a_pod_on_a_reserved_cpu_keeps_it_but_the_conflict_is_reported():
    kubelet = Holder(HolderKind.KUBELET, "kubelet reservedSystemCPUs", "x")
    inputs = CPUStateInputs(
        cpus=CPUS,
        pods=(Claim(pod("ns/a"), frozenset({0})),),
        reserved=(Claim(kubelet, frozenset({0})),),
    )
    result = classify_cpus("n", inputs)
    assert states(result)[0] is CPUState.EXCLUSIVE
    assert result.conflicts and "also claimed by kubelet" in result.cpus[0].notes[0]


def test_cpus_a_claim_names_but_the_node_lacks_are_reported():
    inputs = CPUStateInputs(cpus=CPUS, pods=(Claim(pod("ns/a"), frozenset({1, 99})),))
    result = classify_cpus("n", inputs)
    assert result.conflicts == ("ns/a names CPUs this node does not have: [99]",)


def test_unpinned_pods_claim_whole_cores_at_the_end_of_their_zone():
    inputs = CPUStateInputs(cpus=CPUS, shared={0: SharedClaim(millicores=1500, pods=2)})
    result = classify_cpus("n", inputs)
    shared = sorted(cpu.id for cpu in result.cpus if cpu.state is CPUState.SHARED)
    assert shared == [3, 11]  # ceil(1.5) = 2 CPUs: both threads of zone 0's last core
    assert "1.5 CPUs requested on this zone by 2 pod(s)" in result.cpus[3].holder.detail
    assert states(result)[7] is CPUState.FREE  # zone 1 untouched


def test_the_shared_share_never_takes_held_cpus():
    inputs = CPUStateInputs(
        cpus=CPUS,
        pods=(Claim(pod("ns/a"), frozenset({0, 1, 2, 3, 8, 9, 10})),),
        shared={0: SharedClaim(millicores=4000, pods=1)},
    )
    result = classify_cpus("n", inputs)
    assert [cpu.id for cpu in result.cpus if cpu.state is CPUState.SHARED] == [11]


def test_zone_counts_add_up_per_zone():
    inputs = CPUStateInputs(cpus=CPUS, pods=(Claim(pod("ns/a"), frozenset({0, 8})),))
    counts = classify_cpus("n", inputs).zone_counts()
    assert counts[0][CPUState.EXCLUSIVE] == 2 and counts[0][CPUState.FREE] == 6
    assert sum(counts[1].values()) == 8


def test_notes_reach_their_cpu():
    inputs = CPUStateInputs(cpus=CPUS, notes={5: ("in the system-QoS cpuset",)})
    assert classify_cpus("n", inputs).cpus[5].notes == ("in the system-QoS cpuset",)
