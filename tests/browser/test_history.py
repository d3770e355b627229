"""The overview's trend chart in real Chromium (issue 33): on the demo cluster (which
seeds a plausible past) after the figures job has run a few times more, the chart draws
the cluster's figures over time, with its CSV export; the node page draws each zone."""

from __future__ import annotations

from topology.models import Cluster, ClusterFigureSample
from topology.services.mirror.figures import recompute_figures

from .conftest import assert_accessible, screenshot, wait_for_charts


def test_the_overview_draws_the_trend_and_the_node_its_zones(page, demo):
    cluster = Cluster.objects.get(name=demo)
    for _ in range(3):
        recompute_figures(cluster_id=cluster.pk)
    stored = ClusterFigureSample.objects.filter(cluster=cluster).count()
    assert stored > 600  # 14 days every 30 minutes, and the runs above
    page.goto(f"/c/{demo}/")
    wait_for_charts(page)
    trend = page.evaluate(
        "() => { const c = document.querySelector('#history-panel .js-plotly-plot');"
        " return c && {kind: c.layout.meta.kind, points: c.layout.meta.points,"
        " traces: c.data.map(t => t.name), n: c.data[0].x.length}; }"
    )
    assert trend["kind"] == "trend" and trend["points"] == trend["n"] > 600
    assert "fragmentation (%)" in trend["traces"] and "free exclusive CPUs" in trend["traces"]
    csv = page.request.get(page.locator("#trend-csv").get_attribute("href"))
    assert csv.ok and csv.text().startswith("taken_at,nodes,zones,free_cpus_total")
    assert_accessible(page)
    page.locator("#history-panel").scroll_into_view_if_needed()
    screenshot(page, "overview-trend")

    node = page.locator("#node-table tbody tr th a").first
    node.click()
    wait_for_charts(page)
    zones = page.evaluate(
        "() => { const c = document.querySelector('#zone-history .js-plotly-plot');"
        " return c && c.layout.meta.zones; }"
    )
    assert zones, "the node page draws a line per zone"
