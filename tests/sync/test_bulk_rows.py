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
from topology.services import importer
from topology.services.writers import bulk, pods, rows, write_records
from topology.services.writers.rows import JsonText, insert_rows, update_rows
from topology.sync.writer import BULK_LOAD, _Listing, relaxed_commits

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
    listing = _Listing(stored={})
    due = [listing.wrote(BULK_LOAD // 2) for _ in range(48)]
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
    listing = _Listing(stored={})
    for _ in range(pages):
        listing.wrote(BULK_LOAD // 2)
    assert listing.stale_at_end() is refreshed_at_end


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
