"""Admin for the mirrored slo-controller-config: its strategies and resctrl settings."""

from __future__ import annotations

from django.contrib import admin

from topology.admin.base import ReadOnlyAdmin, ReadOnlyInline
from topology.models import QoSConfig, QoSStrategy, ResctrlSetting


class StrategyInline(ReadOnlyInline):
    model = QoSStrategy
    fields = ["position", "name", "node_selector"]


@admin.register(QoSConfig)
class QoSConfigAdmin(ReadOnlyAdmin):
    list_display = ["cluster", "namespace", "name", "resource_version", "observed_at"]
    list_filter = ["cluster"]
    inlines = [StrategyInline]


class ResctrlInline(ReadOnlyInline):
    model = ResctrlSetting
    fields = [
        "qos_class",
        "enable",
        "cat_range_start_percent",
        "cat_range_end_percent",
        "mba_percent",
    ]


@admin.register(QoSStrategy)
class QoSStrategyAdmin(ReadOnlyAdmin):
    list_display = ["__str__", "config", "position"]
    list_filter = ["config__cluster"]
    inlines = [ResctrlInline]
