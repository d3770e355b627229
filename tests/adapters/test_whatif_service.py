"""What-if through the service and `manage.py whatif`: the JSON contract, offline and mirror."""

import json
from datetime import timedelta
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command
from django.utils import timezone

from topology.demo import generate_demo_objects
from topology.models import Cluster, Node, NodeFigures, SyncState
from topology.selectors.clusters import data_age
from topology.services.mirror.figures import recompute_figures
from topology.services.mirror.importer import import_objects
from topology.services.whatif.service import WhatIfInputError, parse_weights, run_whatif

NODE_KEYS = {"node", "fits", "score", "reasons", "numa_zones", "cpuset", "annotations"}
POD = {
    "apiVersion": "v1",
    "kind": "Pod",
    "metadata": {"name": "big", "namespace": "default"},
    "spec": {
        "containers": [
            {
                "name": "app",
                "resources": {
                    "requests": {"cpu": "16", "memory": "8Gi"},
                    "limits": {"cpu": "16", "memory": "8Gi"},
                },
            }
        ]
    },
}


@pytest.fixture(scope="module")
def demo_objects():
    return generate_demo_objects(nodes=12, seed=5)


@pytest.fixture
def dump(tmp_path: Path, demo_objects) -> Path:
    path = tmp_path / "cluster.json"
    path.write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": demo_objects}))
    return path


@pytest.fixture
def pod_file(tmp_path: Path) -> Path:
    path = tmp_path / "pod.json"
    path.write_text(json.dumps(POD))
    return path


def run_command(*args: str) -> dict:
    from io import StringIO

    out = StringIO()
    call_command("whatif", *args, stdout=out)
    return json.loads(out.getvalue())


def check_shape(answer: dict, replicas: int) -> None:
    assert set(answer) == {"scheduler", "judged_by", "scoring", "data_age_seconds", "groups",
                           "nodes", "rules", "placements", "capacity"}  # fmt: skip
    for node in answer["nodes"]:
        assert NODE_KEYS <= set(node)
        assert answer["rules"][node["rules"]]  # the rules that judged it, listed once
        assert isinstance(node["fits"], bool) and isinstance(node["reasons"], list)
        assert node["cpuset"] is None or all(isinstance(c, int) for c in node["cpuset"])
    for group in answer["groups"]:
        assert [p["replica"] for p in group["placements"]] == list(range(replicas))
    assert answer["capacity"]["total"] == sum(answer["capacity"]["per_node"].values())
    assert answer["capacity"]["total"] == sum(answer["capacity"]["per_system"].values())


def test_offline_whatif_needs_no_database(dump, pod_file):
    """No django_db mark: any query would fail the test."""
    answer = run_command("--objects", str(dump), "--pod", str(pod_file), "--replicas", "3")
    check_shape(answer, 3)
    assert answer["data_age_seconds"] is None
    fits = [n for n in answer["nodes"] if n["fits"]]
    misses = [n for n in answer["nodes"] if not n["fits"]]
    assert fits and misses and all(m["reasons"] for m in misses)
    first = answer["groups"][0]
    group_nodes = [n for n in answer["nodes"] if n["system"] == first["system"]]
    assert answer["nodes"][0] == group_nodes[0]  # groups come whole, in order
    assert group_nodes[0]["fits"]  # ranked within the group: fitting nodes first
    assert first["placements"][0]["node"] == group_nodes[0]["node"] == first["best"]


@pytest.mark.django_db
def test_the_mirror_answers_like_the_dump_and_says_how_old_its_data_is(
    dump, pod_file, demo_objects
):
    import_objects(cluster_name="demo", objects=demo_objects)
    offline = run_command("--objects", str(dump), "--pod", str(pod_file), "--scheduler",
                          "scheduler-plugins", "--scoring", "MostAllocated")  # fmt: skip
    mirror = run_command("--cluster", "demo", "--pod", str(pod_file), "--scheduler",
                         "scheduler-plugins", "--scoring", "MostAllocated")  # fmt: skip
    assert mirror["nodes"] == offline["nodes"]
    assert mirror["data_age_seconds"] is not None and mirror["data_age_seconds"] >= 0


@pytest.mark.django_db
def test_a_whatif_never_writes(demo_objects):
    import_objects(cluster_name="demo", objects=demo_objects)
    cluster = Cluster.objects.get(name="demo")
    before = list(Node.objects.values_list("name", "resource_version", "content_hash"))
    run_whatif(cluster=cluster, pod=POD, replicas=5)
    assert list(Node.objects.values_list("name", "resource_version", "content_hash")) == before


@pytest.mark.parametrize(
    ("kwargs", "field"),
    [
        ({"replicas": -1}, "replicas"),
        ({"scheduler": "volcano"}, "scheduler"),
        ({"scoring": "Random"}, "scoring"),
        ({"weights": {"cpu": 0}}, "weights"),
        ({"capacity": "no"}, "capacity"),
        ({"pod": {"kind": "Deployment"}}, "pod"),
        ({"pod": {"spec": {"containers": []}}}, "pod.spec.containers"),
    ],
)
@pytest.mark.django_db
def test_bad_input_names_the_field_at_fault(kwargs, field):
    cluster = Cluster.objects.create(name="empty")
    with pytest.raises(WhatIfInputError) as caught:
        run_whatif(cluster=cluster, **{"pod": POD, **kwargs})
    assert field in caught.value.field_errors


def test_no_capacity_answers_the_same_nodes_with_capacity_null(dump, pod_file):
    counted = run_command("--objects", str(dump), "--pod", str(pod_file), "--replicas", "2")
    skipped = run_command(
        "--objects", str(dump), "--pod", str(pod_file), "--replicas", "2", "--no-capacity"
    )
    assert skipped["capacity"] is None and counted["capacity"]["total"] > 0
    assert skipped == {**counted, "capacity": None}


def test_the_table_says_capacity_was_not_counted(dump, pod_file):
    from io import StringIO

    out = StringIO()
    args = ("--objects", str(dump), "--pod", str(pod_file), "--format", "table")
    call_command("whatif", *args, "--no-capacity", stdout=out)
    assert out.getvalue().rstrip().endswith("capacity: not counted (--no-capacity)")


def test_the_table_names_each_nodes_rules_once_below_the_ranking(dump, pod_file):
    from io import StringIO

    out = StringIO()
    args = ("--objects", str(dump), "--pod", str(pod_file), "--format", "table")
    call_command("whatif", *args, stdout=out)
    lines = out.getvalue().splitlines()
    legend = lines.index("rules that judged the nodes (the rules column):")
    sets = [line.split()[0] for line in lines[legend + 1 :] if line.startswith("  R")]
    assert sets == [f"R{n}" for n in range(1, len(sets) + 1)]
    ranked = [line for line in lines[:legend] if line[:3].strip().isdigit()]
    assert {line.split()[5] for line in ranked} == set(sets)  # the rules column


def test_weights_are_parsed_or_refused():
    assert parse_weights("cpu=1, memory=2") == {"cpu": 1, "memory": 2}
    with pytest.raises(WhatIfInputError):
        parse_weights("cpu=zero")


def test_the_command_refuses_a_missing_cluster_and_bad_files(tmp_path, pod_file):
    with pytest.raises(CommandError, match="cannot read"):
        call_command("whatif", "--objects", str(tmp_path / "nope.json"), "--pod", str(pod_file))


@pytest.mark.django_db
def test_figures_say_where_an_exclusive_pod_fits(demo_objects):
    import_objects(cluster_name="demo", objects=demo_objects)
    cluster = Cluster.objects.get(name="demo")
    assert recompute_figures(cluster_id=cluster.pk) == Node.objects.filter(cluster=cluster).count()
    figures = NodeFigures.objects.filter(node__cluster=cluster)
    assert all(f.max_free_cpus_in_one_zone <= f.free_cpus_total for f in figures)
    assert all(
        f.max_free_cpus_in_one_zone == max(f.free_cpus_by_zone.values(), default=0) for f in figures
    )
    roomy = figures.filter(max_free_cpus_in_one_zone__gte=16).values_list("node__name", flat=True)
    answer = run_whatif(cluster=cluster, pod=POD, scheduler="scheduler-plugins")
    snn_fits = {n["node"] for n in answer["nodes"] if n["fits"] and n["numa_zones"]}
    assert snn_fits <= set(roomy)
    assert recompute_figures(cluster_id=cluster.pk) == figures.count()  # idempotent


@pytest.mark.django_db
def test_the_whatif_data_age_is_the_stalest_synced_collection_like_every_page(demo_objects):
    import_objects(cluster_name="demo", objects=demo_objects)
    cluster = Cluster.objects.get(name="demo")
    now = timezone.now()
    SyncState.objects.create(cluster=cluster, resource="nodes", synced_through=now)
    SyncState.objects.create(
        cluster=cluster, resource="pods", synced_through=now - timedelta(minutes=10)
    )
    answer = run_whatif(cluster=cluster, pod=POD, scheduler="scheduler-plugins")
    assert 600 <= answer["data_age_seconds"] < 660
    assert data_age(cluster).as_of == now - timedelta(minutes=10)
