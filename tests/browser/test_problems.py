"""The Problems page in real Chromium (issue 30 §4): from the header badge to a diagnosed
pod, and on to the what-if prefilled with that pod."""

from __future__ import annotations

import re

from .conftest import assert_accessible, screenshot


def test_the_badge_leads_to_a_diagnosis_and_on_to_its_what_if(page, demo):
    page.goto(f"/c/{demo}/")
    badge = page.locator("#problems-link .badge")
    assert int(badge.inner_text()) >= 2  # the demo's Pending and rejected pods at least
    page.locator("#problems-link").click()
    page.wait_for_url(f"**/c/{demo}/problems/")
    assert_accessible(page)
    rows = page.locator("table tbody tr")
    assert "analytics/wide-join-0" in rows.all_inner_texts()[0] + rows.all_inner_texts()[1]
    screenshot(page, "problems")

    page.get_by_role("link", name="analytics/wide-join-legacy-0").click()
    page.wait_for_url(re.compile(r".*/pods/analytics/wide-join-legacy-0/diagnosis/$"))
    assert_accessible(page)
    admission = page.locator("#admission-title")
    assert "admission on" in admission.inner_text()
    assert "TopologyAffinityError" in page.locator("main").inner_text()
    screenshot(page, "pod-diagnosis")

    page.locator("#whatif-link").click()
    page.wait_for_url(re.compile(r".*/whatif/\?manifest=.*"))
    assert "wide-join-legacy-0" in page.locator("textarea[name=manifest]").input_value()
    assert page.locator(".whatif-table tbody tr").count() > 0  # the question was answered
    screenshot(page, "pod-whatif")


def test_findings_filter_by_kind_in_the_url(page, demo):
    page.goto(f"/c/{demo}/problems/?f-kind=filter-admits-all")
    headings = page.locator("h3").all_inner_texts()
    assert headings and all("filter-admits-all" in h for h in headings)
