"""Scheduler profiles: the system and plugin arguments that judge a pod, and who picks them."""

from __future__ import annotations

from dataclasses import replace

import pytest

from scheduler_api.engine.model.snapshot import ClusterSnapshot, Flavour, PodSpec
from scheduler_api.engine.whatif.evaluate import evaluate, place
from scheduler_api.engine.whatif.profiles import (
    ProfileError,
    parse_scheduler_configuration,
    pod_affiliation,
    resolve_judge,
)
from scheduler_api.engine.whatif.systems import Scheduler
from tests.engine.data_nrt_builders import guaranteed
from tests.engine.test_koordinator import koord_node, lsr_pod
from tests.engine.test_whatif import two_zone_node

CONFIG = {
    "apiVersion": "kubescheduler.config.k8s.io/v1",
    "kind": "KubeSchedulerConfiguration",
    "profiles": [
        {
            "schedulerName": "topo-pack",
            "plugins": {"multiPoint": {"enabled": [{"name": "NodeResourceTopologyMatch"}]}},
            "pluginConfig": [
                {
                    "name": "NodeResourceTopologyMatch",
                    "args": {
                        "scoringStrategy": {
                            "type": "MostAllocated",
                            "resources": [{"name": "cpu", "weight": 3}],
                        }
                    },
                }
            ],
        },
        {
            "schedulerName": "koord-scheduler",
            "plugins": {"filter": {"enabled": [{"name": "NodeNUMAResource"}]}},
            "pluginConfig": [
                {
                    "name": "NodeNUMAResource",
                    "args": {
                        "defaultCPUBindPolicy": "SpreadByPCPUs",
                        "scoringStrategy": {"type": "MostAllocated"},
                        "numaScoringStrategy": {"type": "MostAllocated"},
                    },
                }
            ],
        },
        {
            "schedulerName": "crane-scheduler",
            "plugins": {
                "filter": {"enabled": [{"name": "NodeResourceTopologyMatch"}]},
                "preBind": {"enabled": [{"name": "NodeResourceTopologyMatch"}]},
            },
        },
        {"plugins": {"score": {"disabled": [{"name": "*"}]}}},
    ],
}


def test_each_profile_names_its_system_and_arguments() -> None:
    topo, koord, crane, default = parse_scheduler_configuration(CONFIG)
    assert (topo.scheduler_name, topo.system) == ("topo-pack", Scheduler.SCHEDULER_PLUGINS)
    assert topo.nrt.scoring_strategy.value == "MostAllocated"
    assert dict(topo.nrt.resource_weights) == {"cpu": 3}
    assert koord.system is Scheduler.KOORDINATOR
    assert koord.koordinator.default_cpu_bind_policy == "SpreadByPCPUs"
    assert koord.koordinator.numa_scoring_strategy == "MostAllocated"
    assert crane.system is Scheduler.CRANE  # the same plugin name, enabled at preBind
    assert (default.scheduler_name, default.system) == ("default-scheduler", Scheduler.DEFAULT)
    assert topo.arguments()["scoringStrategy"]["type"] == "MostAllocated"


def test_a_plugin_disabled_at_its_point_does_not_count() -> None:
    config = {
        **CONFIG,
        "profiles": [
            {
                "schedulerName": "off",
                "plugins": {
                    "multiPoint": {"enabled": [{"name": "NodeResourceTopologyMatch"}]},
                    "filter": {"disabled": [{"name": "NodeResourceTopologyMatch"}]},
                },
            }
        ],
    }
    (profile,) = parse_scheduler_configuration(config)
    # multiPoint re-enables it everywhere, as kube-scheduler's expansion does
    assert profile.system is Scheduler.SCHEDULER_PLUGINS


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"kind": "ConfigMap"}, "kind"),
        ({"apiVersion": "v1"}, "apiVersion"),
        ({"profiles": "x"}, "profiles"),
        ({"profiles": [{"schedulerName": "a"}, {"schedulerName": "a"}]}, "repeated"),
        (
            {
                "profiles": [
                    {
                        "plugins": {"filter": {"enabled": [{"name": "NodeResourceTopologyMatch"}]}},
                        "pluginConfig": [
                            {
                                "name": "NodeResourceTopologyMatch",
                                "args": {"scoringStrategy": {"type": "Random"}},
                            }
                        ],
                    }
                ]
            },
            r"profiles\[0\]\.pluginConfig\.NodeResourceTopologyMatch\.scoringStrategy\.type",
        ),
        (
            {
                "profiles": [
                    {
                        "plugins": {"filter": {"enabled": [{"name": "NodeNUMAResource"}]}},
                        "pluginConfig": [
                            {"name": "NodeNUMAResource", "args": {"defaultCPUBindPolicy": "X"}}
                        ],
                    }
                ]
            },
            "defaultCPUBindPolicy",
        ),
    ],
)
def test_a_bad_document_is_refused_naming_the_field(change: dict, message: str) -> None:
    with pytest.raises(ProfileError, match=message):
        parse_scheduler_configuration({**CONFIG, **change})


def test_the_pods_scheduler_name_picks_its_profile() -> None:
    profiles = parse_scheduler_configuration(CONFIG)
    judge = resolve_judge(guaranteed({"cpu": "1"}), "topo-pack", profiles)
    assert judge.system is Scheduler.SCHEDULER_PLUGINS and judge.profile is profiles[0]
    assert "topo-pack" in judge.how


def test_the_built_in_names_serve_a_cluster_without_configuration() -> None:
    judge = resolve_judge(guaranteed({"cpu": "1"}), "koord-scheduler", ())
    assert judge.system is Scheduler.KOORDINATOR and judge.profile is not None


def test_an_unknown_name_falls_back_to_the_pods_own_marks_then_to_auto() -> None:
    assert resolve_judge(lsr_pod("4"), "default-scheduler", ()).system is Scheduler.KOORDINATOR
    plain = resolve_judge(guaranteed({"cpu": "1"}), "", ())
    assert plain.system is Scheduler.AUTO and plain.profile is None
    assert "ranked apart" in plain.how


def test_the_scheduler_option_overrides_the_profile() -> None:
    judge = resolve_judge(lsr_pod("4"), "koord-scheduler", (), Scheduler.CRANE)
    assert judge.system is Scheduler.CRANE and judge.profile is None


def test_a_pod_marked_by_both_systems_is_nobodys() -> None:
    pod = PodSpec(
        "ns",
        "p",
        labels={"koordinator.sh/qosClass": "LSR"},
        annotations={"topology.crane.io/topology-awareness": "true"},
    )
    assert pod_affiliation(pod) is None


def mixed_cluster() -> ClusterSnapshot:
    koord = replace(koord_node(), name="k-node")
    upstream = two_zone_node("u-node", "8", "8")
    crane = replace(two_zone_node("c-node", "8", "8"), flavour=Flavour.CRANE)
    return ClusterSnapshot((crane, koord, upstream))


def test_under_auto_each_systems_nodes_are_ranked_apart_and_never_together() -> None:
    result = evaluate(mixed_cluster(), guaranteed({"cpu": "4", "memory": "1Gi"}), detailed=1)
    systems = [v.system for v in result.nodes]
    # grouped in SYSTEMS order, whatever the scores
    assert systems == [Scheduler.SCHEDULER_PLUGINS, Scheduler.CRANE, Scheduler.KOORDINATOR]
    assert result.systems == tuple(systems)
    # each system's best is worked out in detail, not only the first row overall
    assert all(v.detailed for v in result.nodes)


def test_under_auto_each_system_places_the_replicas_apart() -> None:
    result = place(mixed_cluster(), guaranteed({"cpu": "4", "memory": "1Gi"}), 2)
    by_system: dict[Scheduler | None, list[str | None]] = {}
    for placement in result.placements:
        by_system.setdefault(placement.system, []).append(placement.node)
    assert by_system == {
        Scheduler.SCHEDULER_PLUGINS: ["u-node", "u-node"],
        Scheduler.CRANE: ["c-node", "c-node"],
        Scheduler.KOORDINATOR: ["k-node", "k-node"],
    }


def test_a_profiles_arguments_judge_the_pod() -> None:
    topo = parse_scheduler_configuration(CONFIG)[0]  # MostAllocated: the fuller node first
    snapshot = ClusterSnapshot((two_zone_node("empty", "8", "8"), two_zone_node("full", "5", "5")))
    pod = guaranteed({"cpu": "4", "memory": "1Gi"})
    least = evaluate(snapshot, pod, scheduler="scheduler-plugins")
    most = evaluate(snapshot, pod, scheduler="scheduler-plugins", profile=topo)
    assert least.ranking[0] == "empty" and most.ranking[0] == "full"
    assert most.profile is topo
