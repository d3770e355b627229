"""Validation of a slo-controller-config draft: each rule, and formats.md §4.1's examples.

Pure: no database. Nodes are NodeCache rows (labels, vendor, L3 cbm, socket ids).
"""

from __future__ import annotations

import json

import pytest

from topology.editing.slo_config.preview import schemata_preview
from topology.editing.slo_config.validation import (
    NodeCache,
    QoSIssue,
    has_errors,
    validate_qos_data,
)

KEY = "resource-qos-config"
INTEL_11 = NodeCache("intel-a", {"cpu": "intel"}, "GenuineIntel", "7ff", (0, 1))
AMD_16 = NodeCache("amd-a", {"cpu": "amd"}, "AuthenticAMD", "ffff", (0,))


def config_with(be: dict | None = None, ls: dict | None = None, nodes: list | None = None) -> dict:
    cluster: dict = {}
    if ls is not None:
        cluster["lsClass"] = {"resctrlQOS": ls}
    if be is not None:
        cluster["beClass"] = {"resctrlQOS": be}
    config: dict = {"clusterStrategy": cluster}
    if nodes is not None:
        config["nodeStrategies"] = nodes
    return config


def check(config: dict | str, nodes=(INTEL_11,), **other: str) -> list[QoSIssue]:
    text = config if isinstance(config, str) else json.dumps(config, indent=2)
    return validate_qos_data({KEY: text, **other}, list(nodes))


def at(issues: list[QoSIssue], path: str, severity: str = "error") -> list[QoSIssue]:
    return [i for i in issues if i.path == path and i.severity == severity]


BE_PATH = f"{KEY}.clusterStrategy.beClass.resctrlQOS"


# ---- ranges ------------------------------------------------------------------------------


@pytest.mark.parametrize(("start", "end"), [(50, 30), (30, 30)])
def test_a_cat_range_whose_start_is_not_below_its_end_is_an_error(start, end):
    issues = check(config_with(be={"catRangeStartPercent": start, "catRangeEndPercent": end}))
    (issue,) = at(issues, BE_PATH)
    assert f"catRangeStartPercent {start} must be below catRangeEndPercent {end}" in issue.message


def test_a_node_strategy_start_above_the_inherited_end_is_an_error_naming_where_it_comes_from():
    node = {"name": "n", "nodeSelector": {"matchLabels": {"cpu": "intel"}}}
    node["beClass"] = {"resctrlQOS": {"catRangeStartPercent": 40}}
    issues = check(config_with(be={"catRangeEndPercent": 30}, nodes=[node]))
    (issue,) = at(issues, f"{KEY}.nodeStrategies[0].beClass.resctrlQOS")
    assert "40 must be below catRangeEndPercent 30" in issue.message
    assert "end from clusterStrategy or the defaults" in issue.message
    assert not at(issues, BE_PATH)  # the cluster strategy alone is fine


def test_a_start_above_the_default_be_end_of_30_is_an_error():
    issues = check(config_with(be={"catRangeStartPercent": 40}))
    assert "end from the defaults" in at(issues, BE_PATH)[0].message


@pytest.mark.parametrize(
    ("key", "value"), [("catRangeStartPercent", -1), ("catRangeEndPercent", 101)]
)
def test_a_cat_percent_outside_0_to_100_is_an_error(key, value):
    issues = check(config_with(be={key: value}))
    (issue,) = at(issues, f"{BE_PATH}.{key}")
    assert f"{key} {value} is outside 0–100" in issue.message


@pytest.mark.parametrize("value", [0, 101, -5])
def test_mba_percent_outside_1_to_100_is_an_error(value):
    (issue,) = at(check(config_with(be={"mbaPercent": value})), f"{BE_PATH}.mbaPercent")
    assert "outside 1–100" in issue.message and "no MB line" in issue.message


@pytest.mark.parametrize("value", [1, 100])
def test_mba_percent_at_the_bounds_is_accepted(value):
    assert not at(check(config_with(be={"mbaPercent": value})), f"{BE_PATH}.mbaPercent")


def test_cpu_and_memory_qos_ranges_are_checked():
    config = {
        "clusterStrategy": {
            "beClass": {
                "cpuQOS": {"groupIdentity": 3},
                "memoryQOS": {"wmarkRatio": 101, "wmarkMinAdj": -26, "priority": 12},
            }
        }
    }
    issues = check(config)
    base = f"{KEY}.clusterStrategy.beClass"
    assert "outside -1–2" in at(issues, f"{base}.cpuQOS.groupIdentity")[0].message
    assert at(issues, f"{base}.memoryQOS.wmarkRatio")
    assert at(issues, f"{base}.memoryQOS.wmarkMinAdj")
    assert not at(issues, f"{base}.memoryQOS.priority")


# ---- spelling and types ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("where", "wrong", "right"),
    [
        ("clusterStrategy.beClass.resctrlQOS", "MBAPercent", "mbaPercent"),
        ("clusterStrategy.beClass.resctrlQOS", "CatRangeEndPercent", "catRangeEndPercent"),
        ("clusterStrategy.beClass", "resctrlQos", "resctrlQOS"),
        ("clusterStrategy", "BEClass", "beClass"),
    ],
)
def test_wrong_case_keys_are_errors_that_name_the_right_spelling(where, wrong, right):
    config = config_with(be={"enable": True})
    target = config
    for part in where.split("."):
        target = target.setdefault(part, {})
    target[wrong] = 20 if wrong[0] in "MC" else {}
    (issue,) = at(check(config), f"{KEY}.{where}.{wrong}")
    assert f"`{wrong}` is spelled `{right}`" in issue.message


def test_a_wrong_case_key_beside_the_right_one_says_the_last_wins():
    issues = check(config_with(be={"mbaPercent": 50, "MBAPercent": 20}))
    assert "whichever comes last wins" in at(issues, f"{BE_PATH}.MBAPercent")[0].message


def test_an_unknown_key_is_a_warning_with_the_closest_known_key():
    issues = check(config_with(be={"mbaPrecent": 20}))
    (issue,) = at(issues, f"{BE_PATH}.mbaPrecent", "warning")
    assert (
        "Koordinator ignores it" in issue.message and "did you mean `mbaPercent`" in issue.message
    )
    assert not has_errors(issues)


def test_memory_qos_page_cache_fields_are_upstream_flat_ints_not_an_object():
    config = {
        "clusterStrategy": {"beClass": {"memoryQOS": {"pageCacheLimitEnable": 1, "pageCache": {}}}}
    }
    issues = check(config)
    base = f"{KEY}.clusterStrategy.beClass.memoryQOS"
    assert at(issues, f"{base}.pageCache", "warning")
    assert not [i for i in issues if i.path == f"{base}.pageCacheLimitEnable"]


@pytest.mark.parametrize(
    ("key", "value", "words"),
    [
        ("mbaPercent", "50", "expected an integer, got the string '50'"),
        ("catRangeEndPercent", 30.5, "expected an integer, got the number 30.5"),
        ("enable", "true", "expected true or false"),
    ],
)
def test_a_value_of_the_wrong_json_type_is_an_error(key, value, words):
    (issue,) = at(check(config_with(be={key: value})), f"{BE_PATH}.{key}")
    assert words in issue.message and "keeps its previous config" in issue.message


def test_null_values_are_accepted_as_unset():
    assert not has_errors(check(config_with(be={"mbaPercent": None, "enable": None})))


# ---- invalid JSON ------------------------------------------------------------------------


def test_invalid_json_is_reported_with_its_line_and_column():
    text = '{\n  "clusterStrategy": {\n    "beClass": {"resctrlQOS": {"mbaPercent": 20,}}\n  }\n}'
    (issue,) = check(text)
    assert (issue.severity, issue.path, issue.line, issue.column) == (
        "error",
        KEY,
        3,
        49,
    )  # the `}` after the trailing comma
    assert "invalid JSON" in issue.message


def test_invalid_json_in_another_data_key_is_reported_too():
    issues = check(config_with(), **{"cpu-burst-config": '{"clusterStrategy": {"policy": }}'})
    (issue,) = at(issues, "cpu-burst-config")
    assert (issue.line, issue.column) == (1, 32)


def test_nan_which_go_refuses_is_invalid_json():
    (issue,) = check('{"clusterStrategy": {"beClass": {"resctrlQOS": {"mbaPercent": NaN}}}}')
    assert (issue.line, issue.column) == (1, 63)


# ---- node strategies ---------------------------------------------------------------------


def strategy(name, selector, **classes):
    return {"name": name, "nodeSelector": selector, **classes}


NODES = [
    NodeCache("amd-1", {"cpu": "amd", "zone": "a"}, "AuthenticAMD", "ffff"),
    NodeCache("amd-2", {"cpu": "amd", "zone": "b"}, "AuthenticAMD", "ffff"),
    NodeCache("intel-1", {"cpu": "intel", "zone": "a"}, "GenuineIntel", "7ff"),
    NodeCache("gpu-1", {"cpu": "amd", "zone": "a"}, koordlet=False),  # no koordlet, still selected
]


def test_node_strategies_selecting_the_same_nodes_are_flagged_with_those_nodes():
    nodes = [
        strategy("amd", {"matchLabels": {"cpu": "amd"}}),
        strategy(
            "zone-a",
            {"matchExpressions": [{"key": "zone", "operator": "In", "values": ["a", "c"]}]},
        ),
    ]
    issues = check(config_with(nodes=nodes), NODES)
    (issue,) = at(issues, f"{KEY}.nodeStrategies[1].nodeSelector")
    assert issue.nodes == ("amd-1", "gpu-1")
    assert "`amd` and `zone-a` both select 2 node(s)" in issue.message
    assert "gives them the first, `amd`" in issue.message


def test_disjoint_selectors_are_not_flagged():
    nodes = [
        strategy("amd", {"matchLabels": {"cpu": "amd"}}),
        strategy(
            "not-amd",
            {"matchExpressions": [{"key": "cpu", "operator": "NotIn", "values": ["amd"]}]},
        ),
    ]
    assert not has_errors(check(config_with(nodes=nodes), NODES))


def test_selectors_on_different_labels_can_overlap_and_are_flagged():
    """A node labelled cpu=amd without a zone label would match both."""
    nodes = [
        strategy("amd", {"matchLabels": {"cpu": "amd"}}),
        strategy("no-zone", {"matchExpressions": [{"key": "zone", "operator": "DoesNotExist"}]}),
    ]
    (issue,) = at(check(config_with(nodes=nodes), NODES), f"{KEY}.nodeStrategies[1].nodeSelector")
    assert "a node labelled cpu=amd matches both" in issue.message


def test_selectors_that_overlap_on_no_mirrored_node_are_still_flagged_like_the_webhook_does():
    nodes = [
        strategy("amd", {"matchLabels": {"cpu": "amd"}}),
        strategy("amd-zone-c", {"matchLabels": {"cpu": "amd", "zone": "c"}}),
    ]
    (issue,) = at(check(config_with(nodes=nodes), NODES), f"{KEY}.nodeStrategies[1].nodeSelector")
    assert issue.nodes == ()
    assert "a node labelled cpu=amd, zone=c matches both" in issue.message


@pytest.mark.parametrize(
    ("item", "path", "words"),
    [
        ({"nodeSelector": {"matchLabels": {"a": "b"}}}, "name", "needs a name"),
        ({"name": "x"}, "nodeSelector", "missing: it matches no node"),
        ({"name": "x", "nodeSelector": {}}, "nodeSelector", "empty: it matches every node"),
        (
            {"name": "x", "nodeSelector": {"matchExpressions": [{"key": "a", "operator": "in"}]}},
            "nodeSelector",
            "'in' is not a selector operator",
        ),
        (
            {"name": "x", "nodeSelector": {"matchExpressions": [{"key": "a", "operator": "In"}]}},
            "nodeSelector",
            "needs at least one value",
        ),
        (
            {"name": "x", "nodeSelector": {"matchLabels": {"a": "b c"}}},
            "nodeSelector",
            "valid label",
        ),
    ],
)
def test_node_strategy_profiles_are_checked_as_the_webhook_does(item, path, words):
    issues = check(config_with(nodes=[item]), NODES)
    (issue,) = at(issues, f"{KEY}.nodeStrategies[0].{path}")
    assert words in issue.message


def test_two_node_strategies_may_not_share_a_name():
    nodes = [
        strategy("same", {"matchLabels": {"cpu": "amd"}}),
        strategy("same", {"matchLabels": {"cpu": "intel"}}),
    ]
    issues = check(config_with(nodes=nodes), NODES)
    assert at(issues, f"{KEY}.nodeStrategies[1].name")


# ---- the node's cache: formats.md §4.1 ---------------------------------------------------


@pytest.mark.parametrize(
    ("cbm", "start", "end", "mask"),
    [("7ff", 0, 30, "f"), ("7ff", 10, 50, "3c"), ("3ff", 10, 80, "fe"), ("fffff", 0, 30, "3f")],
)
def test_the_preview_writes_formats_md_worked_l3_masks(cbm, start, end, mask):
    node = NodeCache("n", {}, "GenuineIntel", cbm, (0, 1))
    config = config_with(be={"catRangeStartPercent": start, "catRangeEndPercent": end})
    (group,) = schemata_preview(None, config, [node])
    be = {s.group: s for s in group.draft}["BE"]
    assert be.l3_line == f"L3:0={mask};1={mask};"
    assert not has_errors(check(config, [node]))


def test_an_empty_l3_mask_on_11_ways_at_10_to_15_percent_is_an_error_naming_the_node():
    other = NodeCache("big-cache", {}, "GenuineIntel", "fffff")  # 20 ways: way 2 alone, mask 4
    config = config_with(be={"catRangeStartPercent": 10, "catRangeEndPercent": 15})
    (issue,) = at(check(config, [INTEL_11, other]), BE_PATH)
    assert issue.nodes == ("intel-a",)
    assert "empty mask" in issue.message and "kernel rejects" in issue.message
    groups = {g.nodes: g for g in schemata_preview(None, config, [INTEL_11, other])}
    assert {s.group: s for s in groups[("intel-a",)].draft}["BE"].l3_mask == "0"
    assert {s.group: s for s in groups[("big-cache",)].draft}["BE"].l3_mask == "4"


def test_the_empty_mask_points_at_the_node_strategy_that_set_the_range():
    node = strategy(
        "amd",
        {"matchLabels": {"cpu": "intel"}},
        beClass={"resctrlQOS": {"catRangeStartPercent": 10, "catRangeEndPercent": 15}},
    )
    issues = check(config_with(nodes=[node]))
    assert at(issues, f"{KEY}.nodeStrategies[0].beClass.resctrlQOS")


def test_ls_and_be_ways_overlapping_is_a_warning_with_the_nodes():
    config = config_with(ls={"catRangeEndPercent": 100}, be={"catRangeEndPercent": 30})
    issues = check(config, [INTEL_11, AMD_16])
    warnings = at(issues, BE_PATH, "warning")
    assert {w.nodes for w in warnings} == {("intel-a",), ("amd-a",)}
    intel = next(w for w in warnings if w.nodes == ("intel-a",))
    assert "LS ways 0–10 and BE ways 0–3 of 11 overlap on ways 0–3" in intel.message
    assert not has_errors(issues)


def test_disjoint_ls_and_be_ways_give_no_warning():
    config = config_with(
        ls={"catRangeStartPercent": 30, "catRangeEndPercent": 100},
        be={"catRangeStartPercent": 0, "catRangeEndPercent": 30},
    )
    assert not check(config, [INTEL_11])  # 7ff: LS ways 4–10, BE ways 0–3


def test_nodes_without_koordlet_get_no_cache_checks():
    config = config_with(be={"catRangeStartPercent": 10, "catRangeEndPercent": 15})
    gpu = NodeCache("gpu", {}, "GenuineIntel", "7ff", koordlet=False)
    assert not check(config, [gpu])


def test_errors_come_before_warnings():
    config = config_with(be={"mbaPrecent": 20, "mbaPercent": 0})
    severities = [i.severity for i in check(config)]
    assert severities == sorted(severities, key=lambda s: s != "error")
    assert severities[0] == "error" and "warning" in severities


def test_the_reference_sample_has_no_error(load_sample):
    data = load_sample("slo-controller-config.json")["items"][0]["data"]
    nodes = [
        NodeCache("w3", {"node.kubernetes.io/instance-type": "x"}, "GenuineIntel", "3ff"),
        NodeCache(
            "w6",
            {"node.kubernetes.io/instance-type": "bm.amd.epyc7763.2s.nps4"},
            "AuthenticAMD",
            "ffff",
        ),
    ]
    issues = validate_qos_data(data, nodes)
    assert not has_errors(issues)
    assert {i.nodes for i in issues} == {("w3",), ("w6",)}  # the LS/BE overlap warnings
