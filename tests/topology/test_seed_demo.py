"""seed_demo imports a realistic cluster through the real parsers, and its numbers add up."""

import pytest
from django.core.management import CommandError, call_command

from topology.models import (
    Cluster,
    Node,
    NodeCPUReservation,
    NodeTopology,
    PodAllocation,
    QoSConfig,
    Reservation,
    ZoneResource,
)
from topology.services.mirror.consistency import check_mirror

from .mirror import mirror_state

pytestmark = pytest.mark.django_db


def seed(name: str, nodes: int, seed_value: int) -> Cluster:
    call_command("seed_demo", "--cluster", name, "--nodes", str(nodes), "--seed", str(seed_value))
    return Cluster.objects.get(name=name)


def test_the_default_demo_has_every_shape_flavour_and_phase():
    call_command("seed_demo")
    cluster = Cluster.objects.get(name="demo")
    assert Node.objects.filter(cluster=cluster).count() >= 40
    flavours = set(
        NodeTopology.objects.filter(node__cluster=cluster).values_list("flavour", flat=True)
    )
    assert flavours == {"upstream-v1alpha1", "upstream-v1alpha2", "crane", "koordinator"}
    assert NodeTopology.objects.filter(node__cluster=cluster, zones__numa_id=7).exists()  # NPS4
    assert NodeTopology.objects.filter(node__cluster=cluster, cpu_count=384).exists()
    gpu_zones = ZoneResource.objects.filter(
        zone__topology__node__cluster=cluster, name="nvidia.com/gpu"
    )
    assert gpu_zones.values("zone__topology").distinct().count() >= 1
    sources = set(PodAllocation.objects.filter(cluster=cluster).values_list("source", flat=True))
    assert sources == {"crane", "koordinator", "kubelet"}
    assert NodeCPUReservation.objects.filter(node__cluster=cluster).count() >= 3
    phases = set(Reservation.objects.filter(cluster=cluster).values_list("phase", flat=True))
    assert {"Available", "Pending", "Succeeded", "Failed"} <= phases
    qos = QoSConfig.objects.get(cluster=cluster)
    assert qos.strategies.filter(position__gt=0).count() == 1
    assert (
        qos.strategies.get(position=0).resctrl.filter(qos_class__in=["lsClass", "beClass"]).count()
        == 2
    )
    assert check_mirror(cluster) == []


@pytest.mark.parametrize(("nodes", "seed_value"), [(4, 1), (9, 2), (16, 7), (25, 42)])
def test_the_demo_adds_up_for_several_seeds(nodes, seed_value):
    cluster = seed(f"demo-{seed_value}", nodes, seed_value)
    assert Node.objects.filter(cluster=cluster).count() == nodes
    assert check_mirror(cluster) == []


def test_the_demo_is_deterministic_for_a_seed():
    first = mirror_state(seed("again", 8, 3))
    Cluster.objects.filter(name="again").delete()
    assert mirror_state(seed("again", 8, 3)) == first
    Cluster.objects.filter(name="again").delete()
    assert mirror_state(seed("again", 8, 4)) != first


def test_reseeding_the_same_cluster_changes_nothing(capsys):
    seed("same", 6, 5)
    capsys.readouterr()
    call_command("seed_demo", "--cluster", "same", "--nodes", "6", "--seed", "5")
    out = capsys.readouterr().out
    assert "Node                            0          0          6" in out


def test_if_empty_does_not_seed_twice(capsys):
    seed("first", 4, 0)
    call_command("seed_demo", "--if-empty")
    assert "already mirrored" in capsys.readouterr().out
    assert not Cluster.objects.filter(name="demo").exists()


def test_too_few_nodes_is_a_clear_error():
    with pytest.raises(CommandError, match="at least 4"):
        call_command("seed_demo", "--nodes", "2")
