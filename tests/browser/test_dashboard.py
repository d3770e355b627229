"""The dashboard in real Chromium: no console errors, no request off the server, a screenshot
of every page under var/test-artifacts/."""

from __future__ import annotations

import re
from urllib.parse import parse_qs, urlsplit

from .conftest import assert_accessible, screenshot, wait_for_charts

EPYC_LABEL = "node.kubernetes.io/instance-type=bm.amd.epyc9654.2s.nps4"
CELL_POSITION = """([id, wanted]) => {
  const gd = document.getElementById(id);
  gd.scrollIntoView({block: "center"});
  const trace = gd._fullData[0];  // decoded: the JSON carries numbers as typed arrays
  const xa = gd._fullLayout.xaxis, ya = gd._fullLayout.yaxis;
  const box = gd.getBoundingClientRect();
  for (let y = 0; y < trace.z.length; y++) {
    for (let x = 0; x < trace.z[y].length; x++) {
      const text = trace.text[y][x];
      const match = wanted === null ? Number.isFinite(trace.z[y][x]) : text === wanted;
      if (match) {
        const xv = trace.x ? trace.x[x] : x;
        return {px: box.left + xa._offset + xa.d2p(xv), py: box.top + ya._offset + ya.d2p(y),
                hover: trace.hovertext[y][x], node: trace.x ? trace.x[x] : null};
      }
    }
  }
  return null;
}"""


def table_nodes(page) -> list[str]:
    return page.locator("#node-table tbody th a").all_inner_texts()


def test_overview_filters_by_label_and_puts_it_in_the_url(page, demo):
    page.goto(f"/c/{demo}/")
    wait_for_charts(page)
    assert len(table_nodes(page)) == 8
    assert_accessible(page)
    page.get_by_label("Label", exact=True).fill(EPYC_LABEL)
    page.get_by_role("button", name="Apply").click()
    page.wait_for_url(re.compile(r".*label=.*"))
    wait_for_charts(page)
    assert parse_qs(urlsplit(page.url).query)["label"] == [EPYC_LABEL]
    assert table_nodes(page) == ["epyc-nps4-01", "epyc-nps4-02"]
    meta = page.evaluate("() => document.getElementById('zone-heatmap').layout.meta.nodes")
    assert meta == ["epyc-nps4-01", "epyc-nps4-02"]
    screenshot(page, "overview-filtered")


def test_clicking_a_heatmap_column_opens_its_node(page, demo):
    page.goto(f"/c/{demo}/?ordering=name")
    wait_for_charts(page)
    screenshot(page, "overview")
    cell = page.evaluate(CELL_POSITION, ["zone-heatmap", None])
    page.mouse.move(cell["px"], cell["py"])
    page.wait_for_selector("#zone-heatmap .hoverlayer .hovertext")
    assert "free for an exclusive pod" in page.locator("#zone-heatmap .hoverlayer").text_content()
    page.mouse.click(cell["px"], cell["py"])
    page.wait_for_url(f"**/nodes/{cell['node']}/")


def test_hovering_a_core_names_its_pod(page, demo):
    page.goto(f"/c/{demo}/nodes/epyc-nps4-01/")
    wait_for_charts(page)
    assert_accessible(page)
    cell = page.evaluate(CELL_POSITION, ["core-map", "A"])
    pod = re.findall(r"<b>(.*?)</b>", cell["hover"])[1]
    page.mouse.move(cell["px"], cell["py"])
    page.wait_for_selector("#core-map .hoverlayer .hovertext")
    hover = page.locator("#core-map .hoverlayer").text_content()
    assert pod in hover and "socket" in hover and "core" in hover
    assert page.locator("#core-legend").get_by_text(pod).count() == 1
    screenshot(page, "node-koordinator")


def test_a_node_without_cpu_detail_explains_why(page, demo):
    page.goto(f"/c/{demo}/nodes/intel-2s-01/")
    wait_for_charts(page)
    assert "names no CPU ids, cores or sockets" in page.locator(".why").inner_text()
    screenshot(page, "node-upstream")


def test_live_refresh_polls_and_pauses(page, demo):
    page.goto(f"/c/{demo}/")
    wait_for_charts(page)
    page.evaluate("() => window.topolens.refreshNow()")
    page.wait_for_function("() => window.topolens.refreshes >= 1")
    toggle = page.get_by_role("button", name="Pause live refresh")
    toggle.click()
    assert (
        page.get_by_role("button", name="Resume live refresh").get_attribute("aria-pressed")
        == "true"
    )
    page.evaluate("() => window.topolens.refreshNow()")
    page.wait_for_timeout(300)
    assert page.evaluate("() => window.topolens.refreshes") == 1
    page.get_by_role("button", name="Resume live refresh").click()  # leave it as found


def test_the_qos_page(page, demo):
    page.goto(f"/c/{demo}/qos/")
    wait_for_charts(page)
    assert page.get_by_text("resctrl schemata (AMD)").count() >= 1
    assert page.locator("pre", has_text="MB:").count() >= 3
    screenshot(page, "qos")


def test_the_sync_and_reservation_pages(page, demo):
    page.goto("/sync/")
    assert page.get_by_role("heading", name=re.compile("Sync health")).count() == 1
    assert "The live sync has never run" in page.content()
    screenshot(page, "sync")
    page.goto(f"/c/{demo}/reservations/")
    screenshot(page, "reservations")
    page.locator("tbody th a").first.click()
    page.wait_for_url(re.compile(r".*/reservations/.+/"))
    screenshot(page, "reservation-detail")


def test_keyboard_users_can_skip_to_content(page, demo):
    page.goto(f"/c/{demo}/")
    page.keyboard.press("Tab")
    assert page.evaluate("() => document.activeElement.textContent") == "Skip to content"
