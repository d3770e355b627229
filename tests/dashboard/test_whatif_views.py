"""The what-if page and the compare view: GET forms whose answer is rendered server-side
(no JavaScript needed for the form and the table), ranked, paged, with reasons per zone,
the would-be-picked cores in the core map, and a bounded number of queries."""

from __future__ import annotations

import copy
import html
import json
import re
from urllib.parse import urlencode

import pytest
from django.contrib.auth.models import Group
from django.test import Client
from django.urls import reverse

from scheduler_api.engine.whatif.evaluate import evaluate
from tests.topology.helpers import sample_items
from topology.models import Cluster, Node, NodePolicy
from topology.services.mirror.importer import import_objects
from topology.services.whatif import page as page_service
from topology.services.whatif import service as whatif_service
from topology.services.whatif.manifest import compact_pod_manifest
from topology.services.whatif.service import (
    compare_schedulers,
    mirror_snapshot,
    pod_from_manifest,
    run_whatif,
)

pytestmark = pytest.mark.django_db

# session, user and their permissions (2), cluster; the snapshot (9: with the DRA CPU
# driver's uncore caches) and its data age; the cluster's scheduler configurations (1);
# the drawn nodes (1) and their CPU state (2); the switcher and the data age.
WHATIF_QUERIES = 21
KOORD_POLICY_LABEL = "node.koordinator.sh/numa-topology-policy"
GUARANTEED_16 = {
    "c1-name": "db",
    "c1-cpu_request": "16",
    "c1-cpu_limit": "16",
    "c1-memory_request": "32Gi",
    "c1-memory_limit": "32Gi",
}


def cluster_items(extra_copies: int = 0) -> list[dict]:
    """The reference small cluster (8 nodes, every flavour), plus renamed node copies."""
    items = sample_items("cluster-small.json")
    for index in range(extra_copies):
        for item in [i for i in items if i["kind"] in ("Node", "NodeResourceTopology")][:16]:
            clone = copy.deepcopy(item)
            clone["metadata"]["name"] = f"copy{index}-{item['metadata']['name']}"
            clone["metadata"].pop("uid", None)
            # koordlet's annotations name the original node's pods: keep one claim per pod
            clone["metadata"].pop("annotations", None)
            items.append(clone)
    return items


@pytest.fixture
def small() -> Cluster:
    summary = import_objects(cluster_name="small", objects=cluster_items())
    assert summary.ok, summary.errors
    return Cluster.objects.get(name="small")


def url(view: str = "whatif", cluster: str = "small", **query: str) -> str:
    path = reverse(f"topology:{view}", kwargs={"cluster": cluster})
    return f"{path}?{urlencode(query)}" if query else path


def the_manifest(**compact: object) -> dict:
    """The Pod the form rows of GUARANTEED_16 stand for, built the API's way."""
    resources = {"cpu": "16", "memory": "32Gi"}
    container = {"name": "db", "requests": resources, "limits": resources}
    return compact_pod_manifest({"containers": [container], **compact})


def table_rows(body: str) -> list[tuple[str, str]]:
    """(node, verdict text) of each row of the rendered ranking table, in order."""
    table = body.split('class="nodes whatif-table"', 1)[1].split("</table>", 1)[0]
    node = r'<th scope="row"><a href="[^"]+">([^<]+)</a></th>'
    verdict = r'<td>\s*<span class="verdict \w+">([^<]+)</span>'
    rows = re.findall(node + r"\s*" + verdict, table)
    return rows


def system_runs(systems: list[str]) -> list[str]:
    """The systems in the order their rows come, each once: rows of one system together."""
    runs = [system for i, system in enumerate(systems) if i == 0 or systems[i - 1] != system]
    assert len(runs) == len(set(runs)), f"a system's rows are split: {systems}"
    return runs


def embedded_figure(body: str, key: str) -> dict:
    found = re.search(
        rf'<script type="application/json" id="{key}-data">(.*?)</script>', body, re.S
    )
    assert found, f"no {key} figure in the page"
    return json.loads(found.group(1))


def test_both_pages_need_a_login(client, small):
    for view in ("whatif", "whatif-compare"):
        response = client.get(url(view, **GUARANTEED_16))
        assert response.status_code == 302
        assert response["Location"].startswith(reverse("login"))


def test_the_page_opens_with_the_form_in_the_navigation_and_runs_nothing(staff_client, small):
    response = staff_client.get(url())
    body = response.content.decode()
    assert response.status_code == 200 and response.context["result"] is None
    assert f'href="{url()}" aria-current="page">What-if</a>' in body
    assert 'method="get"' in body and "Simulation." in body
    assert 'class="error"' not in body  # an unasked form shows no errors


def test_a_submitted_pod_gets_its_ranked_table_rendered_without_javascript(staff_client, small):
    response = staff_client.get(url(**GUARANTEED_16))
    answer = run_whatif(cluster=small, pod=the_manifest())
    rows = table_rows(response.content.decode())
    assert [node for node, _ in rows] == [n["node"] for n in answer["nodes"]]
    system_runs([n["system"] for n in answer["nodes"]])  # each system's nodes together
    for system in {n["system"] for n in answer["nodes"]}:  # fitting nodes first in each
        pairs = zip(rows, answer["nodes"], strict=True)
        verdicts = [v for (_, v), n in pairs if n["system"] == system]
        assert verdicts == sorted(verdicts, key=lambda v: v != "✓ fits")
    verdicts = [verdict for _, verdict in rows]
    assert "✗ does not fit" in verdicts and "✓ fits" in verdicts
    result = response.context["result"]
    assert result.fit_count == sum(n["fits"] for n in answer["nodes"])
    assert result.capacity_total == answer["capacity"]["total"]
    copies = {row.node: row.copies for row in result.page.object_list}
    assert copies == {
        n["node"]: answer["capacity"]["per_node"].get(n["node"], 0) for n in answer["nodes"]
    }


def test_scores_descend_among_the_nodes_that_fit(staff_client, small):
    result = staff_client.get(url(scheduler="scheduler-plugins", **GUARANTEED_16)).context["result"]
    scores = [row.score for row in result.page.object_list if row.fits]
    assert scores == sorted(scores, reverse=True) and len(scores) >= 2


def test_each_miss_says_why_per_zone(staff_client, small):
    query = {**GUARANTEED_16, "c1-cpu_request": "24", "c1-cpu_limit": "24"}
    response = staff_client.get(url(**query))
    result = response.context["result"]
    crane = next(row for row in result.page.object_list if row.node == "worker-02")
    assert not crane.fits
    assert "cpu short by 6 CPUs on zone 0; insufficient-numa" in crane.reasons
    assert "cpu short by 6 CPUs on zone 0; insufficient-numa" in response.content.decode()
    checks = {reason.check: reason.nodes for reason in result.reasons}
    assert checks["insufficient-numa"] == 2 and checks["node-resources-fit"] == 2


def test_the_inputs_round_trip_through_the_url(staff_client, small):
    query = {**GUARANTEED_16, "koordinator_qos_class": "LSR", "replicas": "2", "weights": "cpu=2"}
    response = staff_client.get(url(**query))
    body = response.content.decode()
    assert 'name="c1-cpu_request" value="16"' in body
    assert '<option value="LSR" selected>LSR</option>' in body
    assert f'href="{html.escape(url(**query))}">Link to this answer</a>' in body
    again = staff_client.get(url(**query)).context["result"]
    assert [r.node for r in again.page.object_list] == [
        r.node for r in response.context["result"].page.object_list
    ]
    result = response.context["result"]
    assert result.question.pod == the_manifest(koordinator_qos_class="LSR")
    # the pod carries Koordinator's QoS label: koord-scheduler judges it, on every node
    assert result.judged_by["system"] == "koordinator"
    assert {r.system for r in result.page.object_list} == {"koordinator"}
    assert result.placed == min(2, result.capacity_total)


@pytest.mark.parametrize(
    ("query", "error_id"),
    [
        ({"c1-cpu_request": "lots"}, "id_c1-cpu_request_error"),
        ({**GUARANTEED_16, "replicas": "100000"}, "id_replicas_error"),
        ({**GUARANTEED_16, "weights": "cpu"}, "id_weights_error"),
        ({**GUARANTEED_16, "scheduler": "volcano"}, "id_scheduler_error"),
        ({"manifest": "kind: ["}, "id_manifest_error"),
        ({"manifest": "kind: Pod\nspec: {containers: []}"}, "id_manifest_error"),
        (
            {"manifest": '{"kind": "Pod", "spec": {"containers": [{"name": 1}]}}'},
            "id_manifest_error",
        ),
    ],
)
def test_bad_values_are_form_errors_next_to_their_field_not_a_500(
    staff_client, small, query, error_id
):
    response = staff_client.get(url(**query))
    assert response.status_code == 200 and response.context["result"] is None
    assert f'id="{error_id}" role="alert"' in response.content.decode()


def test_the_best_node_without_a_cpu_layout_shows_its_zones_and_why(staff_client, small):
    response = staff_client.get(url(scheduler="scheduler-plugins", **GUARANTEED_16))
    best = response.context["result"].best
    assert best.row.node == "worker-01" and not best.state.has_detail
    body = response.content.decode()
    assert "names no CPU ids, cores or sockets" in body
    assert [zone.chosen for zone in best.zones] == [z in best.row.zones for z in (0, 1)]
    assert "✓ would use this zone" in body


def test_an_lsr_pod_is_koordinators_and_its_best_node_shows_its_cpuset(staff_client, small):
    """Issue 27: a Koordinator LSR pod under auto was ranked on Crane nodes first (score
    100, "cpuset: not decided") and its replicas placed there."""
    knobs = {"koordinator_qos_class": "LSR", "koordinator_cpu_bind_policy": "FullPCPUs"}
    query = {**GUARANTEED_16, "c1-cpu_request": "8", "c1-cpu_limit": "8", **knobs}
    response = staff_client.get(url(replicas="2", **query))
    result = response.context["result"]
    assert result.judged_by["system"] == "koordinator"
    assert {row.system for row in result.page.object_list} == {"koordinator"}
    best = result.best
    assert best.row.node == "worker-06" and best.state.has_detail
    assert result.cores is best
    pod = pod_from_manifest(result.question.pod)
    expected = evaluate(mirror_snapshot(small), pod, scheduler="koordinator").verdict("worker-06")
    assert best.row.cpuset == expected.cpuset and len(expected.cpuset) == 8
    assert best.highlight == expected.cpuset
    assert [p.node for p in result.placements if p.node] and all(
        p.node in {row.node for row in result.page.object_list if row.fits}
        for p in result.placements
        if p.node
    )
    body = response.content.decode()
    figure = embedded_figure(body, "core-map")
    assert figure["layout"]["meta"]["highlighted"] == sorted(expected.cpuset)
    assert figure["layout"]["meta"]["node"] == "worker-06"
    assert [trace["name"] for trace in figure["data"]] == ["CPUs", "would be picked (what-if)"]
    assert f'CPUs it would get on worker-06: <code class="cpuset">{best.highlight_text}' in body
    assert "not computed" not in body and "Judged by:" in body


def test_the_kubelets_pinning_is_drawn_for_nodes_scheduler_plugins_judges(staff_client, small):
    query = {**GUARANTEED_16, "c1-cpu_request": "8", "c1-cpu_limit": "8"}
    result = staff_client.get(url(scheduler="scheduler-plugins", **query)).context["result"]
    assert result.cores.row.node == "worker-03"  # static CPU manager, per-CPU layout
    assert result.cores.highlight == result.cores.row.cpuset and len(result.cores.highlight) == 8


def test_a_node_picked_from_the_table_is_drawn_and_an_unknown_one_is_said(staff_client, small):
    response = staff_client.get(url(cores="worker-03", **GUARANTEED_16))
    cores = response.context["result"].cores
    assert cores.row.node == "worker-03" and not cores.row.fits and not cores.highlight
    assert "worker-03 does not take this pod: cpu short by" in cores.remark
    assert "show cores" in response.content.decode()
    unknown = staff_client.get(url(cores="nope", **GUARANTEED_16)).context["result"]
    assert unknown.notices == [
        "No node named 'nope' in this cluster: showing the best node's cores."
    ]


def test_a_pod_that_fits_nowhere_is_an_answer_with_every_reason(staff_client, small):
    response = staff_client.get(
        url(**{**GUARANTEED_16, "c1-cpu_request": "900", "c1-cpu_limit": "900"})
    )
    result = response.context["result"]
    assert result.best is None and result.fit_count == 0 and result.placed == 0
    assert all(row.reasons for row in result.page.object_list)
    assert "none: no node fits" in response.content.decode()
    assert "core-map-data" not in response.content.decode()


def test_long_rankings_are_paged_with_fitting_nodes_first(staff_client, small, monkeypatch):
    monkeypatch.setattr(page_service, "PAGE_SIZE", 3)
    query = {"scheduler": "scheduler-plugins", **GUARANTEED_16}  # one system: one ranking
    first = staff_client.get(url(**query))
    second = staff_client.get(url(page="3", **query))
    assert [row.rank for row in first.context["result"].page.object_list] == [1, 2, 3]
    assert [row.rank for row in second.context["result"].page.object_list] == [7, 8]
    assert all(row.fits for row in first.context["result"].page.object_list)
    assert "1–3 of 8" in first.content.decode() and "page=2" in first.content.decode()


def test_paging_through_the_ranking_runs_the_engine_once(
    staff_client, small, monkeypatch, settings
):
    settings.WHATIF_SNAPSHOT_CACHE_SIZE = 2
    settings.WHATIF_ANSWER_CACHE_SIZE = 4
    monkeypatch.setattr(page_service, "PAGE_SIZE", 3)
    runs: list[int] = []
    real = whatif_service.judge_question
    monkeypatch.setattr(
        whatif_service, "judge_question", lambda *a, **k: runs.append(1) or real(*a, **k)
    )
    pages = [staff_client.get(url(page=str(n), **GUARANTEED_16)) for n in (1, 2, 3)]
    assert [p.context["result"].page.number for p in pages] == [1, 2, 3]
    assert len(runs) == 1


def test_a_pasted_manifest_answers_like_the_rows(staff_client, small):
    from_rows = staff_client.get(url(**GUARANTEED_16)).context["result"]
    manifest = json.dumps(the_manifest())
    from_text = staff_client.get(url(manifest=manifest)).context["result"]
    assert from_text.question.from_manifest and from_text.qos_class == "Guaranteed"
    assert [(r.node, r.fits, r.score) for r in from_text.page.object_list] == [
        (r.node, r.fits, r.score) for r in from_rows.page.object_list
    ]


def test_the_query_count_does_not_grow_with_the_cluster(
    staff_client, small, django_assert_max_num_queries
):
    with django_assert_max_num_queries(WHATIF_QUERIES):
        staff_client.get(url(scheduler="scheduler-plugins", **GUARANTEED_16))
    summary = import_objects(cluster_name="small", objects=cluster_items(extra_copies=3))
    assert summary.ok, summary.errors
    with django_assert_max_num_queries(WHATIF_QUERIES):
        response = staff_client.get(url(scheduler="scheduler-plugins", **GUARANTEED_16))
    assert response.context["result"].node_count == 8 + 3 * 8


def test_the_compare_view_puts_each_scheduler_side_by_side(
    staff_client, small, django_assert_max_num_queries
):
    with django_assert_max_num_queries(WHATIF_QUERIES):
        response = staff_client.get(url("whatif-compare", **GUARANTEED_16))
    result = response.context["result"]
    answers = compare_schedulers(cluster=small, pod=the_manifest())
    assert (
        [c.scheduler for c in result.columns]
        == list(answers)
        == [
            "scheduler-plugins",
            "crane",
            "koordinator",
            "default",
        ]
    )
    for column in result.columns:
        answer = answers[column.scheduler]
        assert column.fit_count == sum(n["fits"] for n in answer["nodes"])
        assert column.capacity_total == answer["capacity"]["total"]
        assert column.best.node == answer["nodes"][0]["node"]
    body = response.content.decode()
    assert '<th scope="col">crane</th>' in body and "Why nodes refuse it" in body
    assert html.escape(url(**GUARANTEED_16) + "&scheduler=koordinator") in body


def test_the_compare_view_reports_form_errors_too(staff_client, small):
    response = staff_client.get(url("whatif-compare", **{"c1-cpu_request": "x"}))
    assert response.status_code == 200 and response.context["result"] is None
    assert 'id="id_c1-cpu_request_error" role="alert"' in response.content.decode()


def test_draft_node_policies_can_be_used_and_are_said_to_be(staff_client, small):
    labelled = Node.objects.get(cluster=small, labels__has_key=KOORD_POLICY_LABEL)
    NodePolicy.objects.create(node=labelled, numa_topology_policy="BestEffort")
    plain = staff_client.get(url(scheduler="koordinator", **GUARANTEED_16))
    drafted = staff_client.get(
        url(scheduler="koordinator", use_draft_policies="on", **GUARANTEED_16)
    )
    expected = run_whatif(
        cluster=small, pod=the_manifest(), scheduler="koordinator", use_draft_policies=True
    )
    rows = table_rows(drafted.content.decode())
    assert [node for node, _ in rows] == [n["node"] for n in expected["nodes"]]
    assert "Draft node policies applied" in drafted.content.decode()
    assert "Draft node policies applied" not in plain.content.decode()
    assert re.search(
        r'<input type="checkbox" name="use_draft_policies"[^>]* checked', drafted.content.decode()
    )


def test_the_best_node_can_be_reserved_through_a_prefilled_reservation_form(
    staff_client, small, django_user_model
):
    viewer = django_user_model.objects.create_user("viewer", is_staff=True)
    viewer.groups.add(Group.objects.get(name="viewer"))
    looker = Client()
    looker.force_login(viewer)
    assert looker.get(url(**GUARANTEED_16)).status_code == 403  # as the API refuses them
    operator = django_user_model.objects.create_user("op", is_staff=True)
    operator.groups.add(Group.objects.get(name="operator"))
    client = Client()
    client.force_login(operator)
    body = client.get(url(**GUARANTEED_16)).content.decode()
    link = re.search(r'<a id="reserve-link" href="([^"]+)">', body)
    assert link is not None
    reserve = client.get(html.unescape(link[1]))
    assert reserve.status_code == 200
    form = reserve.context["form"]
    # koord-scheduler schedules Reservations: its ranking's best node, not another system's
    answer = run_whatif(cluster=small, pod=the_manifest())
    best = next(g["best"] for g in answer["groups"] if g["system"] == "koordinator")
    assert best is not None and form.initial["node"] == best
    assert f"Reserve these resources on {best}" in body
    assert json.loads(form.initial["pod_manifest"]) == the_manifest()


def test_the_page_takes_from_the_same_what_if_limit_as_the_api(staff_client, small, settings):
    """Issue 28: 200 concurrent dashboard what-ifs all ran; the API allowed 120 a minute."""
    settings.API_THROTTLE_RATES = {**settings.API_THROTTLE_RATES, "whatif": "2/minute"}
    statuses = [staff_client.get(url(**GUARANTEED_16)).status_code for _ in range(3)]
    assert statuses == [200, 200, 429]
    refused = staff_client.get(url("whatif-compare", **GUARANTEED_16))
    assert refused.status_code == 429 and int(refused["Retry-After"]) > 0
    assert staff_client.get(url()).status_code == 200  # the empty form costs nothing


def test_the_form_takes_a_scheduler_name_that_picks_the_clusters_profile(staff_client, small):
    """Issue 27: the form gains `scheduler_name` (the field existed but was not drawn)."""
    from topology.models import SchedulerConfiguration

    SchedulerConfiguration.objects.create(
        cluster=small,
        name="plugins",
        document="apiVersion: kubescheduler.config.k8s.io/v1\n"
        "kind: KubeSchedulerConfiguration\nprofiles:\n"
        "- schedulerName: topo-aware\n"
        "  plugins: {multiPoint: {enabled: [{name: NodeResourceTopologyMatch}]}}\n",
    )
    blank = staff_client.get(url()).content.decode()
    assert 'name="scheduler_name"' in blank and "picks the cluster" in blank
    response = staff_client.get(url(scheduler_name="topo-aware", **GUARANTEED_16))
    result = response.context["result"]
    assert result.judged_by["system"] == "scheduler-plugins"
    assert result.judged_by["profile"] == "topo-aware"
    assert 'name="scheduler_name" value="topo-aware"' in response.content.decode()
    bad = staff_client.get(url(scheduler_name="Not A Name", **GUARANTEED_16))
    assert 'id="id_scheduler_name_error" role="alert"' in bad.content.decode()
