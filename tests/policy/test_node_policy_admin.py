"""Node policies in admin: observed → desired, errors that block a save, bulk edit, roles."""

from __future__ import annotations

import pytest
from django.conf import settings
from django.contrib.auth.models import Group, User
from django.test import Client
from django.urls import NoReverseMatch, reverse

from tests.factories import ClusterFactory, PodAllocationFactory, PodFactory
from topology.admin import policies as policy_admin
from topology.editing.node_policies.label_selectors import (
    SelectorError,
    parse_selector,
    selector_matches,
)
from topology.models import Cluster, Node, NodePolicy, ReferencePod

from .mirror import koord_node

pytestmark = pytest.mark.django_db
NUMA_POLICY = "node.koordinator.sh/numa-topology-policy"
BULK = "admin:topology_nodepolicy_bulk_edit"


def staff(role: str) -> Client:
    user = User.objects.create_user(username=f"{role}-staff", password=None, is_staff=True)
    user.groups.add(Group.objects.get(name=role))
    client = Client()
    client.force_login(user)
    return client


@pytest.fixture
def cluster() -> Cluster:
    cluster = ClusterFactory(name="lab")
    koord_node(cluster, "db-1", role="db")
    koord_node(cluster, "db-2", role="db", **{NUMA_POLICY: "Restricted"})
    koord_node(cluster, "web-1", role="web")
    return cluster


def change_url(policy: NodePolicy) -> str:
    return reverse("admin:topology_nodepolicy_change", args=[policy.pk])


def form_data(node: Node, **fields: object) -> dict[str, object]:
    data: dict[str, object] = {
        "node": node.pk,
        "numa_topology_policy": "",
        "numa_allocate_strategy": "",
        "cpu_bind_policy": "",
        "crane_topology_awareness": "unknown",
        "reservation_cpus": "",
        "reservation_cpu_count": "",
        "reservation_apply_policy": "",
    }
    data.update(fields)
    return data


def test_the_change_page_shows_observed_against_desired_and_the_exact_patch(
    cluster: Cluster,
) -> None:
    node = Node.objects.get(name="db-2")
    policy = NodePolicy.objects.create(node=node, numa_topology_policy="SingleNUMANode")
    page = staff("admin").get(change_url(policy)).content.decode()
    assert "Observed on the node → desired" in page
    assert "<code>Restricted</code>" in page and "<code>SingleNUMANode</code>" in page
    assert (
        "&quot;node.koordinator.sh/numa-topology-policy&quot;: &quot;SingleNUMANode&quot;" in page
    )
    assert "No errors or warnings." in page


def test_the_change_page_shows_the_warnings_of_the_saved_policy(cluster: Cluster) -> None:
    node = Node.objects.get(name="db-1")
    PodAllocationFactory(pod=PodFactory(node=node, name="pinned"), cpuset="2,14")
    policy = NodePolicy.objects.create(node=node, reservation_cpus="0-3")
    page = staff("admin").get(change_url(policy)).content.decode()
    assert "cuts through CPUs held exclusively" in page and "team/pinned holds 2" in page


def test_an_admin_gets_the_apply_button_and_an_operator_does_not(cluster: Cluster) -> None:
    policy = NodePolicy.objects.create(
        node=Node.objects.get(name="db-1"), numa_topology_policy="SingleNUMANode"
    )
    confirm = reverse("admin:topology_applyrecord_confirm_node", args=[policy.pk])
    assert confirm in staff("admin").get(change_url(policy)).content.decode()
    operator_page = staff("operator").get(change_url(policy)).content.decode()
    assert confirm not in operator_page and "Only the admin role may apply" in operator_page


def test_no_apply_button_is_drawn_when_the_confirm_page_is_not_installed(
    cluster: Cluster, monkeypatch: pytest.MonkeyPatch
) -> None:
    def missing(*args: object, **kwargs: object) -> str:
        raise NoReverseMatch("not installed")

    monkeypatch.setattr(policy_admin, "reverse", missing)
    policy = NodePolicy.objects.create(node=Node.objects.get(name="db-1"), cpu_bind_policy="None")
    assert policy_admin.apply_url(policy) is None
    page = staff("admin").get(change_url(policy)).content.decode()
    assert "Apply to cluster" not in page and "not installed" in page


def test_the_list_shows_what_each_policy_changes(cluster: Cluster) -> None:
    NodePolicy.objects.create(node=Node.objects.get(name="db-2"), numa_topology_policy="BestEffort")
    page = staff("viewer").get(reverse("admin:topology_nodepolicy_changelist")).content.decode()
    assert "Observed → desired" in page
    assert f"<code>{NUMA_POLICY}</code>: Restricted → <strong>BestEffort</strong>" in page


def test_an_error_is_shown_on_its_field_and_nothing_is_saved(cluster: Cluster) -> None:
    node = Node.objects.get(name="db-1")
    response = staff("operator").post(
        reverse("admin:topology_nodepolicy_add"), form_data(node, reservation_cpus="0-1,99")
    )
    assert response.status_code == 200
    assert "CPU 99 is not on node db-1" in response.content.decode()
    assert not NodePolicy.objects.exists()


def test_an_operator_saves_a_policy_and_is_told_its_warnings(cluster: Cluster) -> None:
    node = Node.objects.get(name="db-1")
    PodAllocationFactory(pod=PodFactory(node=node, name="pinned"), cpuset="1")
    response = staff("operator").post(
        reverse("admin:topology_nodepolicy_add"),
        form_data(node, reservation_cpus="0-1", numa_topology_policy="SingleNUMANode"),
        follow=True,
    )
    assert response.status_code == 200
    saved = NodePolicy.objects.get(node=node)
    assert (saved.reservation_cpus, saved.numa_topology_policy) == ("0-1", "SingleNUMANode")
    assert "team/pinned holds 1" in response.content.decode()


def test_a_viewer_cannot_edit_a_policy(cluster: Cluster) -> None:
    node = Node.objects.get(name="db-1")
    policy = NodePolicy.objects.create(node=node, numa_topology_policy="Restricted")
    viewer = staff("viewer")
    assert viewer.get(change_url(policy)).status_code == 200  # read-only view
    response = viewer.post(change_url(policy), form_data(node, numa_topology_policy="BestEffort"))
    assert response.status_code == 403
    assert viewer.post(reverse("admin:topology_nodepolicy_add"), form_data(node)).status_code == 403
    policy.refresh_from_db()
    assert policy.numa_topology_policy == "Restricted"


def test_a_viewer_cannot_bulk_edit(cluster: Cluster) -> None:
    viewer = staff("viewer")
    assert viewer.get(reverse(BULK)).status_code == 403
    data = bulk_data(cluster, "role=db", _save="1", numa_topology_policy="SingleNUMANode")
    assert viewer.post(reverse(BULK), data).status_code == 403
    assert not NodePolicy.objects.exists()


def bulk_data(cluster: Cluster, selector: str, **fields: str) -> dict[str, object]:
    data: dict[str, object] = {"cluster": cluster.pk, "selector_text": selector}
    data.update(fields)
    return data


def test_the_changelist_links_to_the_bulk_edit(cluster: Cluster) -> None:
    page = staff("operator").get(reverse("admin:topology_nodepolicy_changelist"))
    assert reverse(BULK) in page.content.decode()


def test_bulk_edit_shows_the_matching_nodes_and_their_changes_before_saving(
    cluster: Cluster,
) -> None:
    data = bulk_data(cluster, "role in (db)", _match="1", numa_topology_policy="SingleNUMANode")
    response = staff("operator").post(reverse(BULK), data)
    page = response.content.decode()
    assert [p.node.name for p, _, _ in response.context["matching"]] == ["db-1", "db-2"]
    assert "web-1" not in page and "Save for 2 nodes" in page
    assert not NodePolicy.objects.exists()


def test_bulk_edit_saves_every_matching_node_and_only_the_chosen_fields(cluster: Cluster) -> None:
    existing = NodePolicy.objects.create(
        node=Node.objects.get(name="db-2"), cpu_bind_policy="SpreadByPCPUs"
    )
    data = bulk_data(cluster, "role=db", _save="1", numa_topology_policy="SingleNUMANode")
    response = staff("operator").post(reverse(BULK), data, follow=True)
    assert "1 new, 1 updated" in response.content.decode()
    saved = {p.node.name: p for p in NodePolicy.objects.select_related("node")}
    assert set(saved) == {"db-1", "db-2"}
    assert {p.numa_topology_policy for p in saved.values()} == {"SingleNUMANode"}
    existing.refresh_from_db()
    assert existing.cpu_bind_policy == "SpreadByPCPUs"  # not chosen: not touched


def test_bulk_edit_saves_nothing_when_one_node_would_get_an_error(cluster: Cluster) -> None:
    koord_node(cluster, "db-small", role="db", cores=1)  # CPUs 0-3
    data = bulk_data(cluster, "role=db", _save="1", reservation_cpus="8-9")
    response = staff("operator").post(reverse(BULK), data)
    page = response.content.decode()
    assert "Nothing was saved" in page and "db-small" in page
    assert not NodePolicy.objects.exists()


def test_bulk_edit_refuses_a_malformed_selector(cluster: Cluster) -> None:
    data = bulk_data(cluster, "role in (db", _save="1", numa_topology_policy="SingleNUMANode")
    page = staff("operator").post(reverse(BULK), data).content.decode()
    assert "Selector:" in page and "without its" in page
    assert not NodePolicy.objects.exists()


def test_bulk_edit_previews_the_effect_on_placement(cluster: Cluster) -> None:
    data = bulk_data(cluster, "role=db", _preview="1", numa_topology_policy="SingleNUMANode")
    response = staff("operator").post(reverse(BULK), data)
    preview = response.context["preview"]
    big = next(r for r in preview.references if r.shape.name == "exclusive-16-cpu")
    assert big.lost == ["db-1", "db-2"]  # Restricted still let it span both zones
    assert "Lose it:" in response.content.decode()
    assert not NodePolicy.objects.exists()


def test_the_preview_action_shows_the_effect_of_the_selected_policies(cluster: Cluster) -> None:
    policy = NodePolicy.objects.create(
        node=Node.objects.get(name="web-1"), numa_topology_policy="SingleNUMANode"
    )
    response = staff("operator").post(
        reverse("admin:topology_nodepolicy_changelist"),
        {"action": "preview_effect", "_selected_action": [policy.pk]},
    )
    assert response.status_code == 200
    page = response.content.decode()
    assert "exclusive-16-cpu" in page and "Lose it:" in page and "web-1" in page


def test_a_reference_pod_with_a_manifest_that_is_no_pod_is_refused() -> None:
    client = Client()
    client.force_login(User.objects.create_superuser("root", password=None))
    url = reverse("admin:topology_referencepod_add")
    bad = {"name": "bad", "cpus": 4, "memory": "1Gi", "manifest": '{"kind": "Deployment"}'}
    assert "expected kind Pod" in client.post(url, bad).content.decode()
    good = {"name": "db", "cpus": 12, "memory": "8Gi", "manifest": "null"}
    assert client.post(url, good).status_code == 302
    assert ReferencePod.objects.get().cpus == 12


def test_two_reference_pods_for_every_cluster_cannot_share_a_name() -> None:
    client = Client()
    client.force_login(User.objects.create_superuser("root", password=None))
    ReferencePod.objects.create(cluster=None, name="db", cpus=8)
    url = reverse("admin:topology_referencepod_add")
    page = client.post(url, {"name": "db", "cpus": 4, "memory": "1Gi", "manifest": "null"})
    assert "already has this name" in page.content.decode()
    assert ReferencePod.objects.count() == 1


@pytest.mark.parametrize(
    ("selector", "labels", "matches"),
    [
        ("role=db", {"role": "db"}, True),
        ("role==db", {"role": "web"}, False),
        ("role!=db", {}, True),
        ("role in (db, cache),zone", {"role": "cache", "zone": "a"}, True),
        ("role in (db, cache),zone", {"role": "cache"}, False),
        ("role notin (web)", {"role": "db"}, True),
        ("!spot", {"spot": "true"}, False),
        ("example.com/tier=gold", {"example.com/tier": "gold"}, True),
        ("", {"any": "thing"}, True),
    ],
)
def test_selectors_read_like_kubectls(selector: str, labels: dict, matches: bool) -> None:
    assert selector_matches(parse_selector(selector), labels) is matches


@pytest.mark.parametrize("selector", ["role in (db", "role in ()", "a=b,,c", "bad key=x", "a=b c"])
def test_a_malformed_selector_says_what_is_wrong(selector: str) -> None:
    with pytest.raises(SelectorError):
        parse_selector(selector)


def test_admin_messages_keep_node_names_as_kubernetes_spells_them(cluster: Cluster) -> None:
    node = Node.objects.get(name="db-1")
    PodAllocationFactory(pod=PodFactory(node=node, name="pinned"), cpuset="1")
    response = staff("operator").post(
        reverse("admin:topology_nodepolicy_add"),
        form_data(node, reservation_cpus="0-1"),
        follow=True,
    )
    body = response.content.decode()
    assert "db-1: " in body and "Db-1" not in body


def test_leave_as_observed_and_koordinators_none_are_two_choices(cluster: Cluster) -> None:
    page = staff("operator").get(reverse("admin:topology_nodepolicy_add")).content.decode()
    assert '<option value="" selected>— leave as observed —</option>' in page
    assert '<option value="None">None</option>' in page


def test_koordinators_none_policy_is_saved_and_shown_again(cluster: Cluster) -> None:
    node = Node.objects.get(name="db-2")  # observed: Restricted
    client = staff("operator")
    client.post(
        reverse("admin:topology_nodepolicy_add"), form_data(node, numa_topology_policy="None")
    )
    saved = NodePolicy.objects.get(node=node)
    assert saved.numa_topology_policy == ""  # Koordinator's None, not null (leave as observed)
    page = client.get(change_url(saved)).content.decode()
    assert '<option value="None" selected>None</option>' in page


def test_leave_as_observed_is_stored_as_null(cluster: Cluster) -> None:
    node = Node.objects.get(name="db-2")
    staff("operator").post(reverse("admin:topology_nodepolicy_add"), form_data(node))
    assert NodePolicy.objects.get(node=node).numa_topology_policy is None


def test_the_change_page_colours_the_diff_and_wraps_wide_content(cluster: Cluster) -> None:
    node = Node.objects.get(name="db-2")
    policy = NodePolicy.objects.create(node=node, numa_topology_policy="SingleNUMANode")
    page = staff("admin").get(change_url(policy)).content.decode()
    assert '<td class="diff-removed"><code>Restricted</code></td>' in page
    assert '<td class="diff-added"><code>SingleNUMANode</code></td>' in page
    assert "topology/admin-policy.css" in page
    css = (settings.BASE_DIR / "static/topology/admin-policy.css").read_text()
    assert ".diff-added" in css and ".diff-removed" in css and "pre-wrap" in css
