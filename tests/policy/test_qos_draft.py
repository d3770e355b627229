"""The QoS draft services: start from the mirror, save (or refuse), preserve, diff, preview."""

from __future__ import annotations

import json

import pytest

from tests.topology.helpers import first, sample_items
from topology.demo.qos_config import resource_qos_config
from topology.editing.slo_config.typed_fields import FieldRef
from topology.models import Cluster, QoSConfig, QoSDraft
from topology.services.mirror.importer import import_objects
from topology.services.policies.qos_draft import (
    QoSDraftRefused,
    observed_qos_data,
    qos_draft_data,
    qos_draft_diff,
    qos_draft_discard,
    qos_draft_issues,
    qos_draft_save,
    qos_draft_save_edit,
    qos_draft_start,
    qos_editor,
)

pytestmark = pytest.mark.django_db
KEY = "resource-qos-config"
BE_END = FieldRef(0, "beClass", "resctrlQOS", "catRangeEndPercent")
BE_MBA = FieldRef(0, "beClass", "resctrlQOS", "mbaPercent")
CLUSTER_ONLY = ["", "amd-epyc-nps4"]  # the strategies of the sample, as the form shows them


@pytest.fixture
def cluster() -> Cluster:
    """cluster-small: worker-03 is Intel (cbm 3ff, 10 ways), worker-06 AMD EPYC (ffff)."""
    import_objects(cluster_name="small", objects=sample_items("cluster-small.json"))
    return Cluster.objects.get(name="small")


@pytest.fixture
def editor_user(django_user_model):
    return django_user_model.objects.create_user("qos-admin", is_staff=True)


def original_data() -> dict[str, str]:
    return first(sample_items("slo-controller-config.json"), "ConfigMap")["data"]


def test_the_mirror_rebuilds_resource_qos_config_equal_to_the_original(cluster):
    """The mirror keeps strategies as rows; rebuilt, they say exactly what the ConfigMap said."""
    original = original_data()
    rebuilt = observed_qos_data(QoSConfig.objects.get(cluster=cluster))
    assert json.loads(rebuilt[KEY]) == json.loads(original[KEY])
    assert {k: v for k, v in rebuilt.items() if k != KEY} == {
        k: v for k, v in original.items() if k != KEY
    }  # every other key byte for byte


ODD_CONFIG = {
    "clusterStrategy": {
        "policies": {"cpuPolicy": "coreSched"},
        "beClass": {
            "resctrlQOS": {"enable": False, "MBAPercent": 20, "futureKnob": [1, {"a": None}]},
            "networkQOS": {"enable": True, "ingressLimit": "50M"},
        },
        "cgroupRoot": {"blkioQOS": {"blocks": [{"name": "/dev/sdb", "type": "device"}]}},
        "newTopLevel": {"x": 1},
    },
    "nodeStrategies": [
        {"name": "no-selector", "systemClass": {"resctrlQOS": {}}},
        {"name": "null", "nodeSelector": {"matchLabels": {"a": "b"}}, "lsClass": None},
    ],
}  # A top-level key besides these two is not kept by the mirror (Koordinator ignores it).


@pytest.mark.parametrize("config", [resource_qos_config(), ODD_CONFIG], ids=["demo", "odd"])
def test_any_imported_config_is_rebuilt_equal_to_what_the_cluster_had(config):
    configmap = {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": "slo-controller-config", "namespace": "koordinator-system"},
        "data": {KEY: json.dumps(config), "other": "not json at all"},
    }
    import_objects(cluster_name="odd", objects=[configmap])
    rebuilt = observed_qos_data(QoSConfig.objects.get(cluster__name="odd"))
    assert json.loads(rebuilt[KEY]) == config
    assert rebuilt["other"] == "not json at all"


def test_the_rebuilt_config_is_in_koordinators_key_order(cluster):
    rebuilt = json.loads(observed_qos_data(QoSConfig.objects.get(cluster=cluster))[KEY])
    assert list(rebuilt["clusterStrategy"]) == ["lsrClass", "lsClass", "beClass"]
    assert list(rebuilt["clusterStrategy"]["beClass"]) == ["cpuQOS", "resctrlQOS"]
    assert list(rebuilt["clusterStrategy"]["beClass"]["resctrlQOS"]) == [
        "enable",
        "catRangeStartPercent",
        "catRangeEndPercent",
        "mbaPercent",
    ]
    assert list(rebuilt["nodeStrategies"][0])[:2] == ["name", "nodeSelector"]


def test_a_draft_starts_as_the_observed_configmap_and_its_resource_version(cluster, editor_user):
    QoSConfig.objects.filter(cluster=cluster).update(resource_version="4711")
    draft = qos_draft_start(cluster=cluster, user=editor_user)
    assert draft.data == observed_qos_data(QoSConfig.objects.get(cluster=cluster))
    assert draft.base_resource_version == "4711"
    assert draft.updated_by == editor_user
    assert qos_draft_diff(cluster=cluster) == ""


def test_a_draft_cannot_start_without_a_mirrored_configmap(editor_user):
    bare = Cluster.objects.create(name="bare")
    with pytest.raises(QoSDraftRefused, match="no koordinator-system/slo-controller-config"):
        qos_draft_start(cluster=bare, user=editor_user)
    assert not QoSDraft.objects.exists()


def test_a_save_with_invalid_json_is_refused_with_line_and_column_and_stores_nothing(
    cluster, editor_user
):
    draft = qos_draft_start(cluster=cluster, user=editor_user)
    before = dict(draft.data)
    broken = {**before, KEY: '{\n  "clusterStrategy": {\n    "beClass": }\n}'}
    with pytest.raises(QoSDraftRefused) as refused:
        qos_draft_save(cluster=cluster, data=broken, user=editor_user)
    (issue,) = refused.value.issues
    assert (issue.path, issue.line, issue.column) == (KEY, 3, 16)
    assert "nothing was saved" in issue.message
    assert "line 3, column 16" in str(refused.value)
    draft.refresh_from_db()
    assert draft.data == before


def test_invalid_json_already_in_the_cluster_is_not_refused_but_blocks_the_apply(
    cluster, editor_user
):
    config = QoSConfig.objects.get(cluster=cluster)
    config.data = {**config.data, "system-config": "{oops"}
    config.save()
    draft = qos_draft_start(cluster=cluster, user=editor_user)
    qos_draft_save(cluster=cluster, data=draft.data, user=editor_user)
    (issue,) = [i for i in qos_draft_issues(cluster=cluster) if i.path == "system-config"]
    assert issue.is_error and (issue.line, issue.column) == (1, 2)


def test_a_typed_edit_changes_one_value_and_keeps_everything_else_verbatim(cluster, editor_user):
    draft = qos_draft_start(cluster=cluster, user=editor_user)
    config = json.loads(draft.data[KEY])
    config["clusterStrategy"]["beClass"]["resctrlQOS"]["futureKnob"] = {"x": [1, 2]}
    config["clusterStrategy"]["experimental"] = True
    config["nodeStrategies"][0]["beClass"]["blkioQOS"] = {"enable": False}
    raw = {**draft.data, KEY: json.dumps(config, indent=2), "custom-key": '{"keep": "me"}'}
    qos_draft_save(cluster=cluster, data=raw, user=editor_user)

    qos_draft_save_edit(
        cluster=cluster,
        data=qos_draft_data(cluster=cluster),
        typed_changes={BE_END: 50},
        strategy_names=CLUSTER_ONLY,
        user=editor_user,
    )
    saved = qos_draft_data(cluster=cluster)
    edited = json.loads(saved[KEY])
    config["clusterStrategy"]["beClass"]["resctrlQOS"]["catRangeEndPercent"] = 50
    assert edited == config
    assert list(edited["clusterStrategy"]["beClass"]["resctrlQOS"]) == list(
        config["clusterStrategy"]["beClass"]["resctrlQOS"]
    )  # the edited key kept its place, the unknown one stayed after it
    assert {k: v for k, v in saved.items() if k != KEY} == {
        k: v for k, v in raw.items() if k != KEY
    }


def test_a_typed_field_cleared_removes_that_key_only(cluster, editor_user):
    qos_draft_start(cluster=cluster, user=editor_user)
    qos_draft_save_edit(
        cluster=cluster,
        data=qos_draft_data(cluster=cluster),
        typed_changes={BE_MBA: None},
        strategy_names=CLUSTER_ONLY,
        user=editor_user,
    )
    be = json.loads(qos_draft_data(cluster=cluster)[KEY])["clusterStrategy"]["beClass"]
    assert be["resctrlQOS"] == {"enable": True, "catRangeStartPercent": 0, "catRangeEndPercent": 30}
    assert be["cpuQOS"] == {"enable": True, "groupIdentity": -1}


def test_a_typed_field_for_a_class_not_stated_creates_it(cluster, editor_user):
    qos_draft_start(cluster=cluster, user=editor_user)
    field = FieldRef(1, "systemClass", "cpuQOS", "groupIdentity")
    qos_draft_save_edit(
        cluster=cluster,
        data=qos_draft_data(cluster=cluster),
        typed_changes={field: 0},
        strategy_names=CLUSTER_ONLY,
        user=editor_user,
    )
    node = json.loads(qos_draft_data(cluster=cluster)[KEY])["nodeStrategies"][0]
    assert node["systemClass"] == {"cpuQOS": {"groupIdentity": 0}}


def test_typed_edits_are_refused_when_the_raw_json_lists_other_strategies(cluster, editor_user):
    draft = qos_draft_start(cluster=cluster, user=editor_user)
    config = json.loads(draft.data[KEY])
    config["nodeStrategies"].insert(0, {"name": "new", "nodeSelector": {"matchLabels": {"a": "b"}}})
    with pytest.raises(QoSDraftRefused, match="differ from the ones the typed fields"):
        qos_draft_save_edit(
            cluster=cluster,
            data={**draft.data, KEY: json.dumps(config)},
            typed_changes={FieldRef(1, "beClass", "resctrlQOS", "mbaPercent"): 20},
            strategy_names=CLUSTER_ONLY,
            user=editor_user,
        )
    assert qos_draft_data(cluster=cluster) == draft.data


def test_a_draft_with_errors_is_stored_and_its_errors_reported(cluster, editor_user):
    qos_draft_start(cluster=cluster, user=editor_user)
    qos_draft_save_edit(
        cluster=cluster,
        data=qos_draft_data(cluster=cluster),
        typed_changes={BE_MBA: 0},
        strategy_names=CLUSTER_ONLY,
        user=editor_user,
    )
    errors = [i for i in qos_draft_issues(cluster=cluster) if i.is_error]
    assert [i.path for i in errors] == [f"{KEY}.clusterStrategy.beClass.resctrlQOS.mbaPercent"]


def test_the_diff_shows_the_changed_value_under_its_data_key(cluster, editor_user):
    qos_draft_start(cluster=cluster, user=editor_user)
    qos_draft_save_edit(
        cluster=cluster,
        data=qos_draft_data(cluster=cluster),
        typed_changes={BE_END: 50},
        strategy_names=CLUSTER_ONLY,
        user=editor_user,
    )
    diff = qos_draft_diff(cluster=cluster)
    assert diff.startswith(f"--- observed/{KEY}\n+++ draft/{KEY}\n")
    assert '-        "catRangeEndPercent": 30,\n' in diff
    assert '+        "catRangeEndPercent": 50,\n' in diff
    assert "colocation-config" not in diff


def test_the_diff_names_added_and_removed_keys(cluster, editor_user):
    draft = qos_draft_start(cluster=cluster, user=editor_user)
    data = {k: v for k, v in draft.data.items() if k != "cpu-burst-config"}
    data["host-application-config"] = '{"applications": []}'
    qos_draft_save(cluster=cluster, data=data, user=editor_user)
    diff = qos_draft_diff(cluster=cluster)
    assert "--- observed/cpu-burst-config\n+++ /dev/null\n" in diff
    assert "--- /dev/null\n+++ draft/host-application-config\n@@ -0,0 +1,3 @@\n" in diff
    assert '+  "applications": []\n' in diff


def test_the_preview_gives_intel_and_amd_their_own_mb_lines_now_and_with_the_draft(
    cluster, editor_user
):
    qos_draft_start(cluster=cluster, user=editor_user)
    qos_draft_save_edit(
        cluster=cluster,
        data=qos_draft_data(cluster=cluster),
        typed_changes={BE_MBA: 15, BE_END: 50},
        strategy_names=CLUSTER_ONLY,
        user=editor_user,
    )
    groups = {g.nodes: g for g in qos_editor(cluster=cluster).preview}
    assert set(groups) == {("worker-03",), ("worker-06",)}  # the two koordlet nodes
    intel, amd = groups[("worker-03",)], groups[("worker-06",)]
    intel_be = {group: (now, after) for group, now, after in intel.rows}["BE"]
    assert intel_be[0].l3_line == "L3:0=7;" and intel_be[1].l3_line == "L3:0=1f;"  # 10 ways
    assert intel_be[0].mb_line == "MB:0=100;" and intel_be[1].mb_line == "MB:0=20;"  # 15 → 20
    assert intel.changed and intel.draft_strategy == "clusterStrategy"
    # The AMD node follows its node strategy (BE 0–20 %, mbaPercent 50): the draft leaves it.
    amd_be = {group: (now, after) for group, now, after in amd.rows}["BE"]
    assert amd_be[0] == amd_be[1] and amd_be[1].mb_line == "MB:0=80;1=80;"
    assert amd.is_amd and not amd.changed
    assert {g: a.mb_line for g, _n, a in amd.rows}["LS"] == "MB:0=2048;1=2048;"


def test_a_draft_started_before_the_configmap_changed_is_warned_about(cluster, editor_user):
    QoSConfig.objects.filter(cluster=cluster).update(resource_version="10")
    qos_draft_start(cluster=cluster, user=editor_user)
    QoSConfig.objects.filter(cluster=cluster).update(resource_version="12")
    (issue,) = [
        i for i in qos_draft_issues(cluster=cluster) if i.path == "metadata.resourceVersion"
    ]
    assert issue.severity == "warning" and "10 → 12" in issue.message


def test_discarding_drops_the_draft_and_reads_then_raise(cluster, editor_user):
    qos_draft_start(cluster=cluster, user=editor_user)
    assert qos_draft_discard(cluster=cluster) is True
    assert qos_draft_discard(cluster=cluster) is False
    with pytest.raises(QoSDraft.DoesNotExist, match="has no QoS draft"):
        qos_draft_data(cluster=cluster)
    assert QoSConfig.objects.filter(cluster=cluster).exists()  # the mirror is untouched
