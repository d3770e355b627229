"""The writers' bulk paths: on PostgreSQL rows are COPYed and updated from plain tuples;
elsewhere Django's bulk methods write them. Both must leave the same mirror."""

from __future__ import annotations

import copy

import pytest
from django.db import IntegrityError, connection, transaction
from django.utils import timezone

from tests.topology.mirror import mirror_state
from topology.models import Cluster, Node, Pod
from topology.parsers import MirroredKind, parse_object
from topology.services.mirror import importer
from topology.services.mirror.writers import bulk, pods, rows, write_records
from topology.services.mirror.writers.bulk import BULK_LOAD, LoadStatistics
from topology.services.mirror.writers.rows import JsonText, insert_rows, update_rows
from topology.sync.ahead import parse_ahead
from topology.sync.writer import relaxed_commits

pytestmark = pytest.mark.django_db
postgresql_only = pytest.mark.skipif(
    connection.vendor != "postgresql", reason="compares the PostgreSQL paths with Django's"
)


@pytest.fixture
def without_postgresql_paths(monkeypatch):
    def off() -> None:
        for module in (bulk, rows, pods):
            monkeypatch.setattr(module, "on_postgresql", lambda: False)

    return off


def _changed(items: list[dict]) -> list[dict]:
    """Every object at a new resourceVersion, labelled, so that re-importing updates it."""
    changed = copy.deepcopy(items)
    for obj in changed:
        obj["metadata"]["resourceVersion"] = "7" + str(obj["metadata"].get("resourceVersion", ""))
        obj["metadata"]["labels"] = {**(obj["metadata"].get("labels") or {}), "round": "2"}
    return changed


@postgresql_only
def test_copy_and_django_bulk_methods_write_the_same_mirror(demo_items, without_postgresql_paths):
    importer.import_objects(cluster_name="copied", objects=copy.deepcopy(demo_items))
    importer.import_objects(cluster_name="copied", objects=_changed(demo_items))
    without_postgresql_paths()
    importer.import_objects(cluster_name="orm", objects=copy.deepcopy(demo_items))
    importer.import_objects(cluster_name="orm", objects=_changed(demo_items))
    copied = mirror_state(Cluster.objects.get(name="copied"))
    orm = mirror_state(Cluster.objects.get(name="orm"))
    assert copied["pods"] and copied["allocations"] and copied["zone_resources"]
    assert copied == orm
    # The second import updated in place (UPDATE … FROM VALUES), with the new labels.
    assert all(row["labels"].get("round") == "2" for _, row in copied["pods"])


@postgresql_only
def test_a_column_left_out_takes_its_default(db):
    cluster = Cluster.objects.create(name="defaults")
    now = timezone.now()
    (node_id,) = insert_rows(Node, ("cluster_id", "name", "observed_at"), [(cluster.pk, "n", now)])
    node = Node.objects.get(pk=node_id)
    assert (node.labels, node.unschedulable, node.uid) == ({}, False, "")


def test_rows_take_json_text_or_values_alike(db, without_postgresql_paths):
    cluster = Cluster.objects.create(name="json")
    now = timezone.now()
    columns = ("cluster_id", "name", "observed_at", "labels")
    labels = {"a": "1"}
    first = insert_rows(Node, columns, [(cluster.pk, "text", now, JsonText('{"a":"1"}', labels))])
    without_postgresql_paths()
    second = insert_rows(Node, columns, [(cluster.pk, "value", now, JsonText("ignored", labels))])
    update_rows(Node, ("labels",), [(second[0], ({"b": "2"},))])
    assert Node.objects.get(pk=first[0]).labels == labels
    assert Node.objects.get(pk=second[0]).labels == {"b": "2"}


def test_an_unknown_column_is_refused_before_anything_is_written(db):
    with pytest.raises(ValueError, match="no column"):
        rows._insert_plan(Node, ("cluster_id", "nmae"))


@postgresql_only
def test_a_wrong_absent_hint_fails_the_batch_as_a_database_error(demo_items):
    importer.import_objects(cluster_name="hint", objects=copy.deepcopy(demo_items))
    cluster = Cluster.objects.get(name="hint")
    pod = next(i for i in demo_items if i["kind"] == "Pod" and i["status"]["phase"] == "Running")
    record = parse_object(_changed([pod])[0]).record
    key = (record.namespace, record.name)
    with pytest.raises(IntegrityError), transaction.atomic():
        write_records(cluster, MirroredKind.POD, [record], timezone.now(), absent={key})
    assert Pod.objects.filter(cluster=cluster, name=record.name).count() == 1


def test_table_statistics_are_refreshed_as_a_list_grows_geometrically():
    load = LoadStatistics()
    due = [load.wrote(BULK_LOAD // 2) for _ in range(48)]
    # After 5,000 rows, then 20,000, then 80,000: not on every page.
    assert [i + 1 for i, is_due in enumerate(due) if is_due] == [2, 8, 32]


@pytest.mark.parametrize(
    ("pages", "refreshed_at_end"),
    [
        pytest.param(1, False, id="a small list: never"),
        pytest.param(2, False, id="5,000 rows, refreshed on the last page"),
        pytest.param(40, False, id="100,000 rows, refreshed at 80,000"),
        pytest.param(20, True, id="50,000 rows, refreshed at 20,000"),
    ],
)
def test_a_list_refreshes_statistics_at_its_end_only_if_they_are_out_of_date(
    pages, refreshed_at_end
):
    load = LoadStatistics()
    for _ in range(pages):
        load.wrote(BULK_LOAD // 2)
    assert load.stale_at_end() is refreshed_at_end


@postgresql_only
def test_a_session_does_not_wait_for_the_disk_at_each_commit_and_restores_it():
    def setting() -> str:
        with connection.cursor() as cursor:
            cursor.execute("SHOW synchronous_commit")
            return cursor.fetchone()[0]

    before = setting()
    with relaxed_commits():
        assert setting() == "off"
    assert setting() == before


@postgresql_only
def test_statistics_are_refreshed_on_the_columns_plans_use():
    assert bulk._planned_columns(Pod) == (
        "id",
        "cluster_id",
        "node_id",
        "namespace",
        "name",
        "node_name",
    )
    bulk.refresh_statistics([Pod, Node])  # runs: every column named exists


AWKWARD_LABELS = {"tab": "a\tb", "newline": "a\nb", "slash": "a\\b", "cr": "a\rb", "é": "ü"}


def _awkward_pod() -> dict:
    """A pod whose text COPY must escape: tabs, newlines, backslashes, non-ASCII."""
    status = '{"cpuset":"2-3","numaNodeResources":[{"node":0,"resources":{"cpu":"2"}}]}'
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": "awkward",
            "namespace": "edge",
            "uid": "u-1",
            "resourceVersion": "5",
            "labels": AWKWARD_LABELS,
            "annotations": {"scheduling.koordinator.sh/resource-status": status},
        },
        "spec": {
            "nodeName": "nowhere",
            "containers": [
                {"name": "c\t1", "resources": {"requests": {"cpu": "2"}, "limits": {"cpu": "2"}}}
            ],
        },
        "status": {"phase": "Running"},
    }


@postgresql_only
def test_prepared_pod_rows_write_what_the_plain_path_writes(demo_items, monkeypatch):
    pods_in = [i for i in demo_items if i["kind"] == "Pod"] + [_awkward_pod()]
    records = [parse_object(obj).record for obj in pods_in]
    keys = [(r.namespace, r.name) for r in records]
    prepared = parse_ahead(MirroredKind.POD, pods_in, {}, row_texts=True)
    assert all(prepared[key].encoded.row for key in keys)
    plain = {key: item.encoded for key, item in parse_ahead(MirroredKind.POD, pods_in, {}).items()}
    assert not any(encoded.row for encoded in plain.values())
    used = []
    monkeypatch.setattr(pods, "insert_prepared", _spy(pods.insert_prepared, used))
    now = timezone.now()
    for name, encodings in (("prepared", prepared), ("plain", plain)):
        cluster = Cluster.objects.create(name=name)
        Node.objects.create(cluster=cluster, name="nowhere", observed_at=now)
        encoded = {
            key: encodings[key].encoded if name == "prepared" else encodings[key] for key in keys
        }
        with transaction.atomic():
            pods.write_pods(cluster, records, now, absent=set(keys), encodings=encoded)
    assert [len(rows) for rows in used] == [len(records), 0]
    written = mirror_state(Cluster.objects.get(name="prepared"))
    assert written["pods"] and written == mirror_state(Cluster.objects.get(name="plain"))
    awkward = Pod.objects.get(cluster__name="prepared", name="awkward")
    assert awkward.labels == {
        "tab": "a\tb",
        "newline": "a\nb",
        "slash": "a\\b",
        "cr": "a\rb",
        "é": "ü",
    }
    assert awkward.containers[0]["name"] == "c\t1"
    assert awkward.node.name == "nowhere" and awkward.observed_at == now
    assert awkward.allocations.get().cpuset == "2-3"


def _spy(function, calls: list):
    def spy(model, columns, prepared_columns, rows):
        calls.append(rows)
        return function(model, columns, prepared_columns, rows)

    return spy


def test_row_texts_are_made_only_for_pods_the_mirror_does_not_hold(demo_items):
    pods_in = [i for i in demo_items if i["kind"] == "Pod"][:2]
    held = (pods_in[0]["metadata"]["namespace"], pods_in[0]["metadata"]["name"])
    parsed = parse_ahead(MirroredKind.POD, pods_in, {held: "older"}, row_texts=True)
    rows_made = {key: item.encoded.row is not None for key, item in parsed.items()}
    assert rows_made[held] is False and list(rows_made.values()).count(True) == 1
    assert not any(item.encoded.row for item in parse_ahead(MirroredKind.POD, pods_in, {}).values())


def test_copy_text_escapes_what_copy_would_misread_and_refuses_unknown_types():
    assert rows.copy_field("a\tb\nc\\d\re") == "a\\tb\\nc\\\\d\\re"
    assert rows.copy_field(None) == "\\N"
    assert (rows.copy_field(True), rows.copy_field(7)) == ("t", "7")
    assert rows.copy_text(Pod, ("labels", "priority"), (JsonText('{"k":"\\t"}', {}), None)) == (
        '{"k":"\\\\t"}\t\\N'
    )
    with pytest.raises(TypeError, match="float"):
        rows.copy_field(1.5)


@postgresql_only
def test_prepared_rows_may_lead_with_json_values_and_share_leading_text(db):
    cluster = Cluster.objects.create(name="leading")
    now = timezone.now()
    columns, prepared = ("cluster_id", "observed_at", "labels"), ("name",)
    ids = rows.insert_prepared(
        Node,
        columns,
        prepared,
        [
            ([cluster.pk, now, {"a": "1"}], rows.copy_text(Node, prepared, ["list-row"])),
            ((cluster.pk, now, None), rows.copy_text(Node, prepared, ["shared-1"])),
            ((cluster.pk, now, None), rows.copy_text(Node, prepared, ["shared-2"])),
        ],
    )
    stored = {n.pk: (n.name, n.labels, n.observed_at) for n in Node.objects.filter(pk__in=ids)}
    assert [stored[pk] for pk in ids] == [
        ("list-row", {"a": "1"}, now),
        ("shared-1", None, now),
        ("shared-2", None, now),
    ]
