"""import_objects / export_snapshot on the real database."""

import copy
import json

import pytest
from django.core.management import CommandError, call_command
from django.db import connection

from scheduler_api.engine.model.kubernetes import pod_requests
from topology.demo import generate_demo_objects
from topology.models import (
    Cluster,
    Node,
    NodeCPUReservation,
    NodeTopology,
    Pod,
    PodAllocation,
    QoSConfig,
    Reservation,
    ZoneResource,
)
from topology.parsers import MirroredKind
from topology.services.mirror import importer
from topology.services.mirror.exporter import export_list, pod_object
from topology.services.mirror.importer import import_objects
from topology.services.mirror.writers.bulk import LoadStatistics
from topology.services.whatif.service import pod_from_manifest

from .helpers import find, sample_items
from .mirror import mirror_state

pytestmark = pytest.mark.django_db


@pytest.fixture
def small_cluster():
    summary = import_objects(cluster_name="small", objects=sample_items("cluster-small.json"))
    assert summary.ok, summary.errors
    return Cluster.objects.get(name="small")


def test_it_mirrors_the_small_cluster_with_exact_values(small_cluster):
    assert Node.objects.filter(cluster=small_cluster).count() == 8
    worker01 = NodeTopology.objects.get(node__name="worker-01")
    assert (worker01.tm_policy, worker01.tm_scope) == ("single-numa-node", "pod")
    cpu0 = ZoneResource.objects.get(zone__topology=worker01, zone__numa_id=0, name="cpu")
    assert (cpu0.capacity, cpu0.allocatable, cpu0.available) == (56000, 52000, 2000)
    koord = NodeTopology.objects.get(node__name="worker-03")
    assert koord.flavour == "koordinator"
    assert koord.cpu_count == 32 and koord.cpus[16] == (16, 0, 0, 0)
    assert NodeCPUReservation.objects.get(node__name="worker-03").reserved_cpus == "14-15,30-31"
    # Finished pods hold nothing and are not mirrored.
    assert Pod.objects.filter(cluster=small_cluster).count() == 123
    assert QoSConfig.objects.get(cluster=small_cluster).strategies.count() == 2


def test_koordinator_label_beats_the_nrt_policy(small_cluster):
    topology = NodeTopology.objects.get(node__name="worker-06")
    assert topology.topology_policies == ["None"]
    assert topology.tm_policy == "single-numa-node"  # node label SingleNUMANode wins


def test_allocations_remember_their_source(small_cluster):
    sources = set(
        PodAllocation.objects.filter(cluster=small_cluster).values_list("source", flat=True)
    )
    assert sources == {"crane", "koordinator", "kubelet"}
    kubelet = PodAllocation.objects.get(pod_name="inference-hd6fpwhrnw-ltdkd", source="kubelet")
    assert (
        kubelet.cpuset == "11,27" and kubelet.pod is not None and kubelet.node.name == "worker-03"
    )


def test_importing_the_same_file_twice_changes_nothing(small_cluster):
    before = mirror_state(small_cluster)
    stamps = dict(Node.objects.values_list("name", "observed_at"))
    summary = import_objects(cluster_name="small", objects=sample_items("cluster-small.json"))
    assert summary.total("created") == summary.total("updated") == summary.total("removed") == 0
    assert summary.total("unchanged") == 144
    assert mirror_state(small_cluster) == before
    assert dict(Node.objects.values_list("name", "observed_at")) == stamps


def test_an_object_absent_from_a_covering_reimport_is_removed(small_cluster):
    items = [
        i
        for i in sample_items("cluster-small.json")
        if not (i["kind"] == "Node" and i["metadata"]["name"] == "worker-08")
        and not (i["kind"] == "Reservation" and i["metadata"]["name"] == "resv-batch-burst")
    ]
    summary = import_objects(cluster_name="small", objects=items)
    assert summary.counts["Node"]["removed"] == 1
    assert summary.counts["Reservation"]["removed"] == 1
    assert not Node.objects.filter(name="worker-08").exists()
    assert not Reservation.objects.filter(name="resv-batch-burst").exists()


def test_a_reimport_that_does_not_cover_a_kind_leaves_it_alone(small_cluster):
    node = find(sample_items("cluster-small.json"), "Node", "worker-01")
    import_objects(cluster_name="small", objects=[node])
    assert Pod.objects.filter(cluster=small_cluster).count() == 123
    assert Node.objects.filter(cluster=small_cluster).count() == 1


def test_a_changed_object_is_updated(small_cluster):
    items = sample_items("cluster-small.json")
    nrt = next(
        i
        for i in items
        if i["kind"] == "NodeResourceTopology" and i["metadata"]["name"] == "worker-01"
    )
    nrt["zones"][0]["resources"][0]["available"] = "4"
    summary = import_objects(cluster_name="small", objects=items)
    assert summary.counts["NodeResourceTopology"]["updated"] == 1
    cpu0 = ZoneResource.objects.get(
        zone__topology__node__name="worker-01", zone__numa_id=0, name="cpu"
    )
    assert cpu0.available == 4000


def test_a_malformed_object_is_reported_and_the_rest_imported():
    items = sample_items("cluster-small.json")
    bad = next(
        i
        for i in items
        if i["kind"] == "NodeResourceTopology" and i["metadata"]["name"] == "worker-04"
    )
    bad["zones"][1]["resources"][0]["capacity"] = "lots"
    summary = import_objects(cluster_name="small", objects=items)
    assert len(summary.errors) == 1
    assert (
        "worker-04" in summary.errors[0] and "zones[1].resources[0].capacity" in summary.errors[0]
    )
    assert not NodeTopology.objects.filter(node__name="worker-04").exists()
    assert NodeTopology.objects.filter(node__cluster__name="small").count() == 7


def test_a_malformed_update_keeps_the_stored_version_whole(small_cluster):
    before = mirror_state(small_cluster)
    items = sample_items("cluster-small.json")
    bad = next(
        i
        for i in items
        if i["kind"] == "NodeResourceTopology" and i["metadata"]["name"] == "worker-04"
    )
    bad["zones"][0]["resources"][0]["available"] = "9"
    bad["zones"][3]["costs"] = [{"name": "node-0", "value": "far"}]
    summary = import_objects(cluster_name="small", objects=items)
    assert summary.counts["NodeResourceTopology"]["errors"] == 1
    assert summary.counts["NodeResourceTopology"].get("removed", 0) == 0
    assert mirror_state(small_cluster) == before


def test_a_topology_without_its_node_is_an_error_not_a_crash():
    nrt = find(sample_items("cluster-small.json"), "NodeResourceTopology", "worker-02")
    summary = import_objects(cluster_name="lonely", objects=[nrt])
    assert "no Node named 'worker-02'" in summary.errors[0]
    assert not NodeTopology.objects.exists()


def test_export_then_import_gives_an_equal_mirror(small_cluster):
    exported = json.loads(json.dumps(export_list(small_cluster)))
    summary = import_objects(cluster_name="copy", objects=exported["items"])
    assert summary.ok, summary.errors
    copy_cluster = Cluster.objects.get(name="copy")
    assert mirror_state(copy_cluster) == mirror_state(small_cluster)
    again = import_objects(cluster_name="small", objects=copy.deepcopy(exported["items"]))
    assert again.total("created") == again.total("updated") == again.total("removed") == 0


def test_commands_round_trip_through_files(tmp_path, capsys):
    source = tmp_path / "in.json"
    source.write_text(
        json.dumps(
            {"apiVersion": "v1", "kind": "List", "items": sample_items("cluster-small.json")}
        )
    )
    call_command("import_objects", "--cluster", "c1", str(source))
    assert "144 created" in capsys.readouterr().out
    out = tmp_path / "out.json"
    call_command("export_snapshot", "--cluster", "c1", "-o", str(out))
    call_command("import_objects", "--cluster", "c2", str(out))
    assert mirror_state(Cluster.objects.get(name="c1")) == mirror_state(
        Cluster.objects.get(name="c2")
    )


def test_import_reads_multi_document_yaml(tmp_path):
    import yaml

    docs = sample_items("node-crane.json")
    path = tmp_path / "objs.yaml"
    path.write_text(yaml.safe_dump_all(docs))
    call_command("import_objects", "--cluster", "y", str(path))
    assert NodeTopology.objects.get(node__cluster__name="y").flavour == "crane"


def test_import_command_fails_when_an_object_fails(tmp_path, capsys):
    items = sample_items("node-crane.json")
    items[0]["status"]["capacity"]["cpu"] = "many"
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(items))
    with pytest.raises(CommandError, match=r"2 object\(s\) failed"):
        call_command("import_objects", "--cluster", "b", str(path))
    err = capsys.readouterr().err
    assert "Node worker-02: status.capacity: cpu: 'many' is not a Kubernetes quantity" in err
    assert "no Node named 'worker-02'" in err  # its NRT cannot stand without it
    assert Pod.objects.filter(cluster__name="b").count() == 24


def test_export_of_an_unknown_cluster_says_which_exist(small_cluster):
    with pytest.raises(CommandError, match="known: small"):
        call_command("export_snapshot", "--cluster", "nope")


def test_a_sidecar_survives_import_export_and_counts_in_the_pods_requests():
    items = sample_items("cluster-small.json")
    pod = next(i for i in items if i["kind"] == "Pod" and i["spec"].get("nodeName"))
    sidecar = {
        "name": "proxy",
        "restartPolicy": "Always",
        "resources": {"requests": {"cpu": "3"}, "limits": {"cpu": "3"}},
    }
    pod["spec"]["initContainers"] = [sidecar]
    assert import_objects(cluster_name="sidecars", objects=items).ok
    stored = Pod.objects.get(cluster__name="sidecars", name=pod["metadata"]["name"])
    assert stored.init_containers[0]["restart_policy"] == "Always"
    exported = pod_object(stored)
    assert exported["spec"]["initContainers"][0]["restartPolicy"] == "Always"
    spec = pod_from_manifest(exported)
    apps = sum(c.requests.get("cpu", 0) for c in spec.containers)
    assert pod_requests(spec)[0]["cpu"] == apps + 3000


def _planner_rows(table: str) -> float:
    """What PostgreSQL's planner believes `table` holds (-1: never analysed)."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT reltuples FROM pg_class WHERE relname = %s", [table])
        return cursor.fetchone()[0]


def test_a_large_import_refreshes_the_statistics_of_what_it_wrote(monkeypatch):
    """As a sync's list does: after a bulk load the planner must not plan for the empty
    tables it saw before (see LoadStatistics); a small import leaves them to autovacuum."""
    refreshed = []
    refresh = importer.refresh_statistics_of
    monkeypatch.setattr(
        importer, "refresh_statistics_of", lambda kind: (refreshed.append(kind), refresh(kind))
    )
    monkeypatch.setattr(importer, "BATCH_SIZE", 20)
    monkeypatch.setattr(importer, "LoadStatistics", lambda: LoadStatistics(analyse_at=50))
    objects = generate_demo_objects(nodes=12, seed=3, cluster="big")
    pods = sum(1 for o in objects if o["kind"] == "Pod")
    assert pods > 50
    summary = import_objects(cluster_name="big", objects=objects)
    assert summary.ok, summary.errors
    assert refreshed.count(MirroredKind.POD) >= 1
    assert MirroredKind.NODE not in refreshed  # 12 nodes: under the threshold
    if connection.vendor == "postgresql":
        assert _planner_rows("topology_pod") >= Pod.objects.count() * 0.5
