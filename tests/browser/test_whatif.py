"""The what-if page in real Chromium: submit a 16-CPU exclusive Guaranteed pod, read the
ranked table, find the would-be-picked cores in the core map, open the compare view; and
the same form and table with JavaScript switched off."""

from __future__ import annotations

import re

from django.conf import settings
from django.contrib.auth.models import Group
from django.test import Client

from .conftest import assert_accessible, screenshot, wait_for_charts

# The highlighted cells: their centre in the page and their hover text.
PICKED_CELL = """() => {
  const gd = document.getElementById("core-map");
  gd.scrollIntoView({block: "center"});
  const trace = gd._fullData[0];
  const xa = gd._fullLayout.xaxis, ya = gd._fullLayout.yaxis;
  const box = gd.getBoundingClientRect();
  for (let y = 0; y < trace.z.length; y++) {
    for (let x = 0; x < trace.z[y].length; x++) {
      if ((trace.hovertext[y][x] || "").includes("would be picked")) {
        return {px: box.left + xa._offset + xa.d2p(x), py: box.top + ya._offset + ya.d2p(y)};
      }
    }
  }
  return null;
}"""


def fill_exclusive_pod(page, cpus: str = "16") -> None:
    container = page.get_by_role("group", name=re.compile("Container 1"))
    container.get_by_label("Name").fill("db")
    container.get_by_label("CPU request").fill(cpus)
    container.get_by_label("CPU limit").fill(cpus)
    container.get_by_label("Memory request").fill("32Gi")
    container.get_by_label("Memory limit").fill("32Gi")
    page.get_by_label("Koordinator QoS class").select_option("LSR")
    page.get_by_label("Koordinator CPU bind policy").select_option("FullPCPUs")


def test_a_what_if_ranks_the_nodes_and_highlights_the_cores_it_would_get(page, demo):
    page.goto(f"/c/{demo}/")
    page.get_by_role("link", name="What-if").click()
    page.wait_for_url(f"**/c/{demo}/whatif/")
    assert_accessible(page)
    fill_exclusive_pod(page)
    page.get_by_role("button", name="Run the what-if").click()
    page.wait_for_url(re.compile(r".*c1-cpu_request=16.*koordinator_qos_class=LSR.*"))
    wait_for_charts(page)
    assert_accessible(page)

    # Koordinator's own QoS label: koord-scheduler judges it, on every node, and says so
    assert "koordinator" in page.locator("#judged-by").inner_text()
    rows = page.locator(".whatif-table tbody tr")
    assert rows.count() == 8
    assert "✓ fits" in rows.first.inner_text()
    systems = page.locator(".whatif-table tbody .system-name").all_inner_texts()
    assert {system.strip() for system in systems} == {"koordinator"}
    # the rules that judged a node fold under its system, and open on a click
    rules = rows.first.locator("details.rules")
    assert not rules.locator("li").first.is_visible()
    rules.locator("summary").click()
    assert rules.locator("li").first.inner_text().startswith("NodeNUMAResource: ")
    verdicts = [
        text.strip() for text in page.locator(".whatif-table tbody .verdict").all_inner_texts()
    ]
    assert verdicts == sorted(verdicts, key=lambda v: v != "✓ fits")
    assert "Simulation." in page.locator(".simulation").inner_text()

    highlighted = page.evaluate("() => document.getElementById('core-map').layout.meta.highlighted")
    assert len(highlighted) == 16
    stars = page.locator("#core-map .scatterlayer .point")
    assert stars.count() == 16  # one star per would-be-picked CPU, drawn by Plotly
    assert "would be picked (what-if)" in page.locator("#core-map .legend").text_content()
    cpuset = page.locator("#drawn-node code.cpuset").last.inner_text()
    assert cpuset and cpuset[0].isdigit()

    cell = page.evaluate(PICKED_CELL)
    page.mouse.move(cell["px"], cell["py"])
    page.wait_for_selector("#core-map .hoverlayer .hovertext")
    assert "would be picked" in page.locator("#core-map .hoverlayer").text_content()
    screenshot(page, "whatif")

    page.get_by_role("link", name="Compare the schedulers for this pod").click()
    page.wait_for_url(re.compile(r".*/whatif/compare/\?.*c1-cpu_request=16.*"))
    headers = page.locator("table.compare thead th[scope=col]").all_inner_texts()
    assert headers[1:] == ["scheduler-plugins", "crane", "koordinator", "default"]
    assert page.get_by_role("rowheader", name="Nodes that fit").count() == 1
    assert_accessible(page)
    screenshot(page, "whatif-compare")


def test_the_form_and_the_table_work_without_javascript(
    browser, live_server, demo, django_user_model, role_groups
):
    staff = django_user_model.objects.create_user("no-script", password=None, is_staff=True)
    staff.groups.add(Group.objects.get(name="operator"))
    client = Client()
    client.force_login(staff)
    context = browser.new_context(
        viewport={"width": 1600, "height": 1000},
        base_url=live_server.url,
        java_script_enabled=False,
    )
    context.add_cookies(
        [
            {
                "name": settings.SESSION_COOKIE_NAME,
                "value": client.cookies[settings.SESSION_COOKIE_NAME].value,
                "url": live_server.url,
            }
        ]
    )
    page = context.new_page()
    try:
        page.goto(f"/c/{demo}/whatif/")
        fill_exclusive_pod(page)
        page.get_by_role("button", name="Run the what-if").click()
        page.wait_for_url(re.compile(r".*c1-cpu_request=16.*"))
        assert page.locator(".whatif-table tbody tr").count() == 8
        assert page.locator("#core-map").count() == 1  # the chart's place; drawing needs JS
        page.get_by_role("button", name="Compare schedulers").click()
        page.wait_for_url(re.compile(r".*/whatif/compare/\?.*"))
        assert page.locator("table.compare thead th[scope=col]").count() == 5
        screenshot(page, "whatif-compare-nojs")
    finally:
        context.close()


def test_a_node_the_kubelet_would_reject_reads_bound_then_rejected(page, demo):
    """Issue 27: 2 + 1 whole CPUs under scheduler-plugins on a full-pcpus-only node read
    "✓ fits" while its own reason said the kubelet would refuse it."""
    query = (
        "c1-name=a&c1-cpu_request=2&c1-cpu_limit=2&c1-memory_request=1Gi&c1-memory_limit=1Gi"
        "&c2-name=b&c2-cpu_request=1&c2-cpu_limit=1&c2-memory_request=1Gi&c2-memory_limit=1Gi"
        "&replicas=3&scheduler=scheduler-plugins"
    )
    page.goto(f"/c/{demo}/whatif/?{query}")
    row = page.locator(".whatif-table tbody tr", has_text="small-02")
    verdict = row.locator("td").nth(1).inner_text()
    assert "bound, then rejected by the kubelet" in verdict and "SMT Alignment Error" in verdict
    assert "✓ fits" not in verdict
    placed = page.locator("table.placements tbody").inner_text()
    assert "small-02" not in placed
    stats = page.locator("dl.stats").inner_text()
    assert "Bound, then rejected by the kubelet" in stats
    screenshot(page, "whatif-kubelet-rejects")
