"""The Agreement page in real Chromium (issue 32): the rates per system, and a
disagreement opened to both placements on the node's core map."""

from __future__ import annotations

import re

from .conftest import assert_accessible, screenshot, wait_for_charts


def test_a_disagreement_shows_both_placements_on_the_core_map(page, demo):
    page.goto(f"/c/{demo}/")
    page.locator("#agreement-link").click()
    page.wait_for_url(f"**/c/{demo}/agreement/")
    assert_accessible(page)
    systems = page.locator("#agreement-rates tbody th").all_inner_texts()
    assert "koordinator" in systems and "crane" in systems
    wait_for_charts(page)
    screenshot(page, "agreement")

    assert "differs" in page.locator("#agreement-pods tbody tr").first.inner_text()  # first
    page.goto(f"/c/{demo}/agreement/?system=koordinator&verdict=differs")
    rows = page.locator("#agreement-pods tbody tr").filter(has_text="cpuset")
    rows.first.locator("th a").click()
    page.wait_for_url(re.compile(rf".*/c/{demo}/agreement/[^/]+/[^/]+/$"))
    assert "differs" in page.locator("#verdict").inner_text()
    wait_for_charts(page)
    maps = page.evaluate(
        "() => [...document.querySelectorAll('.js-plotly-plot')]"
        ".map(c => ({kind: c.layout.meta.kind, cpus: c.layout.meta.highlighted}))"
    )
    assert [m["kind"] for m in maps] == ["core-map", "core-map"]
    real, engine = (m["cpus"] for m in maps)
    assert real and engine and real != engine  # where it landed, where Topolens would put it
    assert_accessible(page)
    screenshot(page, "agreement-pod")
