"""The apply flow in admin, in real Chromium, against a running fake API server: edit a node's
desired policy, open "Apply to cluster…", read the exact patch, confirm, see "applied",
and find the new label on the node in the cluster."""

from __future__ import annotations

import json
import threading

import pytest
from celery import current_app
from django.contrib.auth.models import Group, User
from django.db import connections

from tests.sync.conftest import sync_once
from topology.models import Node, NodePolicy
from topology.services.policies.writeback import APPLY_TASK, run_apply

from .conftest import screenshot

pytest_plugins = ["tests.policy.writeback_fixtures"]
KOORD_NODE = "epyc-nps4-01"
NUMA_POLICY = "node.koordinator.sh/numa-topology-policy"


@pytest.fixture
def worker(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Stands in for the Celery worker: an apply task, once queued on commit, runs in a
    thread of its own with its own database connection (figures tasks are dropped)."""
    ran: list[int] = []

    def run(record_id: int) -> None:
        try:
            run_apply(record_id=record_id)
            ran.append(record_id)
        finally:
            connections.close_all()

    def send_task(name: str, args: list | None = None, **options: object) -> None:
        if name == APPLY_TASK and args:
            threading.Thread(target=run, args=(args[0],), daemon=True).start()

    monkeypatch.setattr(current_app, "send_task", send_task)
    return ran


def test_an_admin_edits_a_policy_confirms_the_exact_patch_and_sees_it_applied(
    page, live_server, fake, connect, fast, worker, role_groups
):
    User.objects.get(username="browser").groups.add(Group.objects.get(name="admin"))
    cluster = connect(fake)
    sync_once(cluster, fast)
    node = Node.objects.get(cluster=cluster, name=KOORD_NODE)
    policy = NodePolicy.objects.create(node=node)  # nothing desired yet

    page.goto(f"/admin/topology/nodepolicy/{policy.pk}/change/")
    page.select_option("select[name=numa_topology_policy]", "Restricted")
    page.locator("input[name=_continue]").click()
    page.wait_for_selector("a.apply-to-cluster")
    screenshot(page, "policy-apply-edited")
    page.locator("a.apply-to-cluster").first.click()

    page.wait_for_selector("#apply-body")
    shown = json.loads(page.locator("#apply-body").inner_text())
    assert shown == {
        "metadata": {
            "labels": {NUMA_POLICY: "Restricted"},
            "resourceVersion": node.resource_version,
        }
    }
    assert f"+metadata.labels.{NUMA_POLICY}: Restricted" in page.locator("#apply-diff").inner_text()
    screenshot(page, "policy-apply-confirm")
    page.get_by_role("button", name="Confirm apply").click()

    page.wait_for_selector("#apply-result")
    page.wait_for_selector("#apply-result:has-text('applied')", timeout=15000)  # refreshes
    screenshot(page, "policy-apply-result")
    in_cluster = fake.cluster.get(("", "nodes"), ("", KOORD_NODE))
    assert in_cluster["metadata"]["labels"][NUMA_POLICY] == "Restricted"
    assert Node.objects.get(pk=node.pk).labels[NUMA_POLICY] == "Restricted"
    assert len(worker) == 1
