"""Schemata maths against formats.md §4's worked examples; effective-strategy merging."""

from __future__ import annotations

import pytest

from topology.choices import ResctrlClass
from topology.domain.resctrl import (
    ResctrlValues,
    cat_ways,
    class_issues,
    effective_class,
    group_schemata,
    l3_mask,
    mb_value,
    schemata_issues,
)


@pytest.mark.parametrize(
    ("cbm", "start", "end", "mask"),
    [
        ("7ff", 0, 30, "f"),
        ("7ff", 10, 50, "3c"),
        ("3ff", 10, 80, "fe"),
        ("fffff", 0, 30, "3f"),
        ("7ff", 10, 15, "0"),  # 2..2: an empty mask the kernel rejects
        ("7ff", 0, 100, "7ff"),
    ],
)
def test_l3_masks_match_the_worked_examples(cbm, start, end, mask):
    assert l3_mask(cat_ways(cbm), start, end) == mask


@pytest.mark.parametrize("bad", [("7ff", 30, 30), ("7ff", 50, 10), ("7ff", -1, 10), ("7fe", 0, 10)])
def test_an_invalid_range_or_cbm_gives_no_mask(bad):
    cbm, start, end = bad
    assert l3_mask(cat_ways(cbm), start, end) is None


@pytest.mark.parametrize(
    ("percent", "vendor", "value"),
    [
        (15, "GenuineIntel", 20),
        (5, "GenuineIntel", 10),
        (100, "GenuineIntel", 100),
        (100, "AuthenticAMD", 2048),
        (50, "AuthenticAMD", 80),
        (33, "AuthenticAMD", 52),
        (0, "GenuineIntel", None),
        (101, "AuthenticAMD", None),
        (None, "GenuineIntel", None),
    ],
)
def test_mb_values_per_vendor(percent, vendor, value):
    assert mb_value(percent, vendor) == value


def test_node_strategy_overrides_cluster_which_overrides_defaults():
    effective = effective_class(
        ResctrlClass.BE,
        [("cluster", ResctrlValues(True, 0, 30, None)), ("amd", ResctrlValues(None, None, 20, 50))],
    )
    assert (effective.enable, effective.start, effective.end, effective.mba) == (True, 0, 20, 50)
    assert effective.origins == ("default", "cluster", "amd")


def test_defaults_apply_when_nothing_is_stated():
    effective = effective_class(ResctrlClass.BE, [("cluster", None)])
    assert (effective.enable, effective.start, effective.end, effective.mba) == (False, 0, 30, 100)


def _classes(**overrides):
    classes = {c: effective_class(c, []) for c in ResctrlClass.values}
    classes.update(overrides)
    return classes


def test_schemata_lines_for_intel_and_amd():
    be = effective_class(ResctrlClass.BE, [("c", ResctrlValues(True, 0, 30, 15))])
    intel = {
        g.group: g for g in group_schemata(_classes(beClass=be), "7ff", "GenuineIntel", [0, 1])
    }
    assert intel["BE"].l3_line == "L3:0=f;1=f;"
    assert intel["BE"].mb_line == "MB:0=20;1=20;"
    assert intel["LS"].l3_line == "L3:0=7ff;1=7ff;"
    amd = {g.group: g for g in group_schemata(_classes(beClass=be), "ffff", "AuthenticAMD", [0])}
    assert amd["BE"].mb_line == "MB:0=24;"
    assert amd["LSR"].mb_line == "MB:0=2048;"


def test_issues_name_what_koordlet_would_skip():
    issues = class_issues("cluster", ResctrlClass.BE, ResctrlValues(True, 40, 20, 0))
    messages = " ".join(i.message for i in issues)
    assert "≥ end" in messages and "no MB line" in messages
    assert all(i.level == "warning" for i in issues)


def test_an_empty_mask_and_intel_rounding_are_flagged():
    be = effective_class(ResctrlClass.BE, [("c", ResctrlValues(True, 10, 15, 15))])
    issues = schemata_issues("cluster", _classes(beClass=be), "7ff", "GenuineIntel")
    messages = [i.message for i in issues]
    assert any("empty mask" in m for m in messages)
    assert any("rounded up to 20" in m for m in messages)
