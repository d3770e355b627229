"""Issue 27, on the demo cluster `make run` seeds: the judging scheduler, and "fits"
meaning the pod lands and runs. Each test is a "Seen" of the issue."""

from __future__ import annotations

import json
from io import StringIO
from pathlib import Path
from typing import Any

import pytest
from django.core.management import CommandError, call_command

from topology.demo import generate_demo_objects
from topology.models import Cluster, SchedulerConfiguration
from topology.services.mirror.importer import import_objects
from topology.services.whatif.service import run_whatif

KOORD_SPEC = "scheduling.koordinator.sh/resource-spec"


@pytest.fixture(scope="module")
def demo_items() -> list[dict[str, Any]]:
    return generate_demo_objects()  # what `make run` seeds: 40 nodes, seed 0


@pytest.fixture
def demo(db: None, demo_items: list[dict[str, Any]]) -> Cluster:
    summary = import_objects(cluster_name="demo", objects=demo_items)
    assert summary.ok, summary.errors
    return Cluster.objects.get(name="demo")


def pod(*cpus: int, labels: dict | None = None, annotations: dict | None = None) -> dict:
    containers = []
    for index, cpu in enumerate(cpus):
        amounts = {"cpu": str(cpu), "memory": "2Gi"}
        containers.append(
            {"name": f"c{index}", "resources": {"requests": amounts, "limits": amounts}}
        )
    metadata = {"name": "p", "labels": labels or {}, "annotations": annotations or {}}
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": metadata,
        "spec": {"containers": containers},
    }


def lsr_full_pcpus(cpus: int) -> dict:
    return pod(
        cpus,
        labels={"koordinator.sh/qosClass": "LSR"},
        annotations={KOORD_SPEC: json.dumps({"preferredCPUBindPolicy": "FullPCPUs"})},
    )


@pytest.mark.django_db
def test_a_node_the_kubelet_rejects_is_never_a_fit_a_replica_or_capacity(demo: Cluster) -> None:
    """Seen: 8 + 1 CPUs under scheduler-plugins, "intel-2s-07 ✓ fits" although its own
    reason said the kubelet would refuse it (SMT Alignment Error)."""
    answer = run_whatif(cluster=demo, pod=pod(8, 1), replicas=40, scheduler="scheduler-plugins")
    rejected = [n for n in answer["nodes"] if n["scheduler_fits"] and not n["fits"]]
    assert "intel-2s-07" in {n["node"] for n in rejected}
    for node in rejected:
        assert node["admission"]["admitted"] is False and node["admission"]["checked"]
        assert "SMT Alignment Error" in node["admission"]["reason"]
        assert any("rejected by the kubelet" in note for note in node["notes"])
        assert node["node"] not in answer["capacity"]["per_node"]
    placed = {p["node"] for p in answer["placements"]}
    assert placed and not placed & {n["node"] for n in rejected}
    fitting = [n for n in answer["nodes"] if n["fits"]]
    assert all(n["admission"]["admitted"] for n in fitting)
    assert answer["nodes"][: len(fitting)] == fitting  # fits rank above the rejected
    (group,) = answer["groups"]
    assert group["rejected_by_kubelet"] == len(rejected)


@pytest.mark.django_db
def test_an_lsr_pod_is_judged_by_koordinator_only_and_its_best_node_has_a_cpuset(
    demo: Cluster,
) -> None:
    """Seen: a 16-CPU LSR FullPCPUs pod under auto ranked seven Crane nodes first (score
    100, cpuset not decided), placed every replica there, and the Reservation on the
    "best" node then did not fit."""
    answer = run_whatif(cluster=demo, pod=lsr_full_pcpus(16), replicas=3)
    assert answer["judged_by"]["system"] == "koordinator"
    assert {n["system"] for n in answer["nodes"]} == {"koordinator"}
    best = answer["nodes"][0]
    assert best["fits"] and best["cpuset"] and len(best["cpuset"]) == 16
    fitting = {n["node"] for n in answer["nodes"] if n["fits"]}
    assert {p["node"] for p in answer["placements"]} <= fitting
    assert answer["placements"][0]["node"] == best["node"]
    assert answer["placements"][0]["cpuset"] == best["cpuset"]


@pytest.mark.django_db
def test_an_unmarked_pod_gets_each_systems_answer_apart(demo: Cluster) -> None:
    """Seen: scores of Crane (100), koord-scheduler (47) and scheduler-plugins (36)
    ranked in one list."""
    answer = run_whatif(cluster=demo, pod=pod(4), replicas=2)
    assert answer["judged_by"]["system"] == "auto" and answer["placements"] == []
    groups = answer["groups"]
    assert len(groups) == 3
    order = [g["system"] for g in groups]
    systems = [n["system"] for n in answer["nodes"]]
    assert systems == sorted(systems, key=order.index)  # each system's nodes together
    for group in groups:
        nodes = [n for n in answer["nodes"] if n["system"] == group["system"]]
        fitting = [n for n in nodes if n["fits"]]
        assert nodes[: len(fitting)] == fitting and group["fits"] == len(fitting)
        assert group["best"] == (fitting[0]["node"] if fitting else None)
        assert [p["system"] for p in group["placements"]] == [group["system"]] * 2


@pytest.mark.django_db
def test_a_stored_scheduler_configuration_maps_the_pods_scheduler_name(demo: Cluster) -> None:
    SchedulerConfiguration.objects.create(
        cluster=demo,
        name="kube-scheduler",
        document=(
            "apiVersion: kubescheduler.config.k8s.io/v1\n"
            "kind: KubeSchedulerConfiguration\n"
            "profiles:\n"
            "- schedulerName: default-scheduler\n"
            "  plugins:\n"
            "    multiPoint:\n"
            "      enabled: [{name: NodeResourceTopologyMatch}]\n"
            "  pluginConfig:\n"
            "  - name: NodeResourceTopologyMatch\n"
            "    args: {scoringStrategy: {type: MostAllocated}}\n"
        ),
    )
    answer = run_whatif(cluster=demo, pod=pod(4))
    judged = answer["judged_by"]
    assert (judged["system"], judged["profile"]) == ("scheduler-plugins", "default-scheduler")
    assert "scheduler config kube-scheduler" in judged["profile_source"]
    assert judged["arguments"]["scheduler-plugins"]["scoringStrategy"]["type"] == "MostAllocated"
    assert answer["scoring"] == "MostAllocated"
    assert {n["system"] for n in answer["nodes"]} == {"scheduler-plugins"}


def run_command(*args: str) -> dict:
    out = StringIO()
    call_command("whatif", *args, stdout=out)
    return json.loads(out.getvalue())


def test_the_cli_reads_a_scheduler_configuration_offline(
    tmp_path: Path, demo_items: list[dict[str, Any]]
) -> None:
    dump = tmp_path / "objects.json"
    dump.write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": demo_items}))
    pod_file = tmp_path / "pod.json"
    pod_file.write_text(json.dumps(pod(4)))
    config = tmp_path / "scheduler.yaml"
    config.write_text(
        "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: koord-scheduler-config}\n"
        "data:\n  koord-scheduler-config: |\n"
        "    apiVersion: kubescheduler.config.k8s.io/v1\n"
        "    kind: KubeSchedulerConfiguration\n"
        "    profiles:\n"
        "    - schedulerName: team-a\n"
        "      plugins: {filter: {enabled: [{name: NodeNUMAResource}]}}\n"
    )
    args = ("--objects", str(dump), "--pod", str(pod_file), "--scheduler-config", str(config))
    answer = run_command(*args, "--scheduler-name", "team-a")
    assert answer["judged_by"]["profile"] == "team-a"
    assert answer["judged_by"]["system"] == "koordinator"
    config.write_text("kind: KubeSchedulerConfiguration\napiVersion: v1\n")
    with pytest.raises(CommandError, match="apiVersion"):
        run_command(*args)


@pytest.mark.django_db
def test_the_answer_names_the_constraints_it_does_not_judge(demo: Cluster, client: Any) -> None:
    """A pod's nodeSelector, affinity, tolerations, spread constraints and resource claims
    keep it off nodes; the engine does not model them yet, so the answer says so instead
    of counting those nodes as fits without a word."""
    plain = run_whatif(cluster=demo, pod=pod(4))
    assert plain["judged_by"]["not_judged"] == []
    constrained = pod(4)
    constrained["spec"]["nodeSelector"] = {"pool": "gpu"}
    constrained["spec"]["tolerations"] = [{"key": "gpu", "operator": "Exists"}]
    answer = run_whatif(cluster=demo, pod=constrained)
    assert answer["judged_by"]["not_judged"] == ["spec.nodeSelector", "spec.tolerations"]
    from django.contrib.auth.models import Group, User

    user = User.objects.create_user("asker")
    user.groups.add(Group.objects.get(name="operator"))
    client.force_login(user)
    page = client.get("/c/demo/whatif/", {"manifest": json.dumps(constrained)}).content.decode()
    assert "Not judged: <code>spec.nodeSelector</code>, <code>spec.tolerations</code>" in page
