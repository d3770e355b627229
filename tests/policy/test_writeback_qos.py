"""QoS ConfigMap write-back against the fake API server: read, compare with the draft's base
version, PUT only then (and the server's 409 as the second guard)."""

from __future__ import annotations

import copy
import json

import pytest

from tests.policy.writeback_support import config_map_in_cluster, writes
from topology.choices import ApplyStatus, WriteKind
from topology.models import QoSConfig
from topology.services.policies.qos_draft import qos_draft_save, qos_draft_start
from topology.services.policies.writeback import request_qos_apply, run_apply
from topology.sync.client import ClusterClient

pytestmark = pytest.mark.django_db
pytest_plugins = ["tests.policy.writeback_fixtures"]
CONFIGMAP_PATH = "/api/v1/namespaces/koordinator-system/configmaps/slo-controller-config"
QOS_KEY = "resource-qos-config"


def with_be_range_end(text: str, end: int) -> str:
    config = json.loads(text)
    config["clusterStrategy"]["beClass"]["resctrlQOS"]["catRangeEndPercent"] = end
    return json.dumps(config)


@pytest.fixture
def draft(synced, admin_user):
    """The cluster's BE L3 range widened from 0–30 % to 0–40 %."""
    start = qos_draft_start(cluster=synced, user=admin_user)
    data = dict(start.data)
    data[QOS_KEY] = with_be_range_end(data[QOS_KEY], 40)
    return qos_draft_save(cluster=synced, data=data, user=admin_user)


def test_the_configmap_on_the_server_equals_the_draft_after_an_apply(fake, draft, admin_user):
    base = draft.base_resource_version
    record = request_qos_apply(cluster=draft.cluster, user=admin_user)
    assert record.status == ApplyStatus.PENDING, record.message
    record = run_apply(record_id=record.pk)
    in_cluster = config_map_in_cluster(fake)
    assert record.status == ApplyStatus.APPLIED, record.message
    assert in_cluster["data"] == draft.data
    assert (
        json.loads(in_cluster["data"][QOS_KEY])["clusterStrategy"]["beClass"]["resctrlQOS"][
            "catRangeEndPercent"
        ]
        == 40
    )
    (sent,) = writes(fake, "PUT")
    assert sent == record.patch  # the audit keeps the exact body sent
    assert sent["metadata"]["resourceVersion"] == base
    assert sent["metadata"]["labels"] == {"app.kubernetes.io/name": "koordinator"}  # kept
    assert sent["data"] == draft.data
    assert record.kind == WriteKind.QOS_CONFIG
    assert record.resource_version_before == base
    assert record.resource_version_after == in_cluster["metadata"]["resourceVersion"] != base
    assert '-        "catRangeEndPercent": 30,' in record.diff.splitlines()
    assert '+        "catRangeEndPercent": 40,' in record.diff.splitlines()
    mirrored = QoSConfig.objects.get(cluster=draft.cluster)
    assert mirrored.resource_version == record.resource_version_after


def test_a_configmap_changed_since_the_draft_is_a_conflict_and_nothing_is_written(
    fake, draft, admin_user
):
    theirs = copy.deepcopy(config_map_in_cluster(fake))
    theirs["data"][QOS_KEY] = with_be_range_end(theirs["data"][QOS_KEY], 25)
    fake.cluster.put(theirs)  # someone edited it with kubectl meanwhile
    expected = config_map_in_cluster(fake)
    record = run_apply(record_id=request_qos_apply(cluster=draft.cluster, user=admin_user).pk)
    assert record.status == ApplyStatus.CONFLICT
    assert "changed in the cluster since the draft began" in record.message
    assert writes(fake, "PUT") == []
    assert config_map_in_cluster(fake) == expected
    assert record.patch["data"] == draft.data  # ours
    assert record.cluster_version["data"] == expected["data"]  # theirs
    assert (
        record.cluster_version["metadata"]["resourceVersion"]
        == (expected["metadata"]["resourceVersion"])
    )
    mirrored = QoSConfig.objects.get(cluster=draft.cluster)  # re-synced to their version
    assert mirrored.resource_version == expected["metadata"]["resourceVersion"]


def test_a_change_between_the_read_and_the_put_meets_the_servers_409(
    fake, draft, admin_user, monkeypatch
):
    """The second guard: the PUT carries the base resourceVersion."""
    read = ClusterClient.read_config_map

    def read_then_someone_writes(self, namespace, name):
        current = read(self, namespace, name)
        theirs = copy.deepcopy(current)
        theirs["data"]["system-config"] = '{"minFreeKbytesFactor": 150}'
        fake.cluster.put(theirs)
        return current

    monkeypatch.setattr(ClusterClient, "read_config_map", read_then_someone_writes)
    record = run_apply(record_id=request_qos_apply(cluster=draft.cluster, user=admin_user).pk)
    assert record.status == ApplyStatus.CONFLICT, record.message
    assert len(writes(fake, "PUT")) == 1  # sent, and refused by the server
    in_cluster = config_map_in_cluster(fake)
    assert in_cluster["data"]["system-config"] == '{"minFreeKbytesFactor": 150}'
    assert in_cluster["data"][QOS_KEY] != draft.data[QOS_KEY]
    assert record.cluster_version["data"] == in_cluster["data"]


def test_a_draft_with_errors_is_refused_and_audited(fake, synced, admin_user):
    start = qos_draft_start(cluster=synced, user=admin_user)
    data = dict(start.data)
    config = json.loads(data[QOS_KEY])
    config["clusterStrategy"]["beClass"]["resctrlQOS"]["catRangeStartPercent"] = 90
    config["clusterStrategy"]["beClass"]["resctrlQOS"]["catRangeEndPercent"] = 20
    data[QOS_KEY] = json.dumps(config)
    qos_draft_save(cluster=synced, data=data, user=admin_user)
    record = request_qos_apply(cluster=synced, user=admin_user)
    assert record.status == ApplyStatus.ERROR and record.message.startswith("Refused")
    assert "catRange" in record.message
    assert writes(fake, "PUT") == [] and not fake.requests_matching("GET", CONFIGMAP_PATH)


def test_no_draft_is_refused(fake, synced, admin_user):
    record = request_qos_apply(cluster=synced, user=admin_user)
    assert record.status == ApplyStatus.ERROR and "no QoS draft" in record.message
