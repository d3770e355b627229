"""Admin for the slo-controller-config: the mirrored config (read-only) and its draft editor.

The editor (`admin:topology_qosdraft_editor`, one page per cluster) shows the typed
fields and raw JSON, the validation issues, the diff from the cluster and the
schemata each node would get. Users with change permission on QoSDraft edit;
users with view permission see the same page read-only. The work is done by
`topology.services.policies.qos_draft`; this module only wires requests to it.
"""

from __future__ import annotations

from typing import Any

from django.contrib import admin, messages
from django.core.exceptions import PermissionDenied
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect
from django.shortcuts import get_object_or_404
from django.template.response import TemplateResponse
from django.urls import NoReverseMatch, URLPattern, path, reverse
from django.utils.html import format_html

from topology.admin.base import ReadOnlyAdmin, ReadOnlyInline
from topology.forms.slo_config import QoSDraftForm
from topology.models import Cluster, QoSConfig, QoSDraft, QoSStrategy, ResctrlSetting
from topology.services.policies.qos_draft import (
    QoSDraftRefused,
    QoSEditor,
    qos_draft_discard,
    qos_draft_save_edit,
    qos_draft_start,
    qos_editor,
)

APPLY_URL_NAME = "admin:topology_applyrecord_confirm_qos"
EDITOR_URL_NAME = "admin:topology_qosdraft_editor"
NODES_SHOWN = 12


def apply_url(cluster_id: int) -> str | None:
    """The write-back confirm page for a cluster's draft, or None while it does not exist."""
    try:
        return reverse(APPLY_URL_NAME, args=[cluster_id])
    except NoReverseMatch:
        return None


def editor_url(cluster_id: int) -> str:
    return reverse(EDITOR_URL_NAME, args=[cluster_id])


class StrategyInline(ReadOnlyInline):
    model = QoSStrategy
    fields = ["position", "name", "node_selector"]


@admin.register(QoSConfig)
class QoSConfigAdmin(ReadOnlyAdmin):
    list_display = ["cluster", "namespace", "name", "resource_version", "observed_at", "draft"]
    list_filter = ["cluster"]
    inlines = [StrategyInline]

    @admin.display(description="draft")
    def draft(self, obj: QoSConfig) -> str:
        return format_html('<a href="{}">Edit draft</a>', editor_url(obj.cluster_id))


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


@admin.register(QoSDraft)
class QoSDraftAdmin(admin.ModelAdmin):
    """Drafts are started, edited and discarded on the editor page, never on a plain form."""

    list_display = ["cluster", "base_resource_version", "updated_by", "updated_at", "editor"]
    list_select_related = ["cluster", "updated_by"]

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    @admin.display(description="editor")
    def editor(self, obj: QoSDraft) -> str:
        return format_html('<a href="{}">Open the editor</a>', editor_url(obj.cluster_id))

    def get_urls(self) -> list[URLPattern]:
        editor = path(
            "cluster/<int:cluster_id>/editor/",
            self.admin_site.admin_view(self.editor_view),
            name="topology_qosdraft_editor",
        )
        return [editor, *super().get_urls()]

    def change_view(
        self,
        request: HttpRequest,
        object_id: str,
        form_url: str = "",
        extra_context: dict[str, Any] | None = None,
    ) -> HttpResponse:
        draft = get_object_or_404(QoSDraft, pk=object_id)
        return HttpResponseRedirect(editor_url(draft.cluster_id))

    def editor_view(self, request: HttpRequest, cluster_id: int) -> HttpResponse:
        cluster = get_object_or_404(Cluster, pk=cluster_id)
        if not self.has_view_permission(request):
            raise PermissionDenied
        if request.method == "POST":
            if not self.has_change_permission(request):
                raise PermissionDenied
            return self._post(request, cluster)
        editor = qos_editor(cluster=cluster)
        return self._render(request, editor, self._form(request, editor, request.GET), [])

    def _post(self, request: HttpRequest, cluster: Cluster) -> HttpResponse:
        action = request.POST.get("action")
        here = editor_url(cluster.pk)
        try:
            if action == "start":
                qos_draft_start(cluster=cluster, user=request.user)
                self.message_user(request, "Draft started from the cluster's ConfigMap.")
                return HttpResponseRedirect(here)
            if action == "discard":
                qos_draft_discard(cluster=cluster)
                self.message_user(request, "Draft discarded.", messages.WARNING)
                return HttpResponseRedirect(here)
            if action == "save":
                return self._save(request, cluster)
        except QoSDraftRefused as refused:
            editor = qos_editor(cluster=cluster)
            return self._render(
                request, editor, self._form(request, editor, request.GET), refused.issues
            )
        return HttpResponse(f"unknown action {action!r}", status=400)

    def _save(self, request: HttpRequest, cluster: Cluster) -> HttpResponse:
        editor = qos_editor(cluster=cluster)
        form = self._form(request, editor, request.POST)
        if editor.draft is None or not form.is_valid():
            return self._render(request, editor, form, [])
        try:
            qos_draft_save_edit(
                cluster=cluster,
                data=form.submitted_texts(),
                typed_changes=form.typed_changes(),
                strategy_names=form.submitted_strategy_names(),
                user=request.user,
            )
        except QoSDraftRefused as refused:
            return self._render(request, editor, form, refused.issues)
        self.message_user(request, "Draft saved.")
        return HttpResponseRedirect(f"{editor_url(cluster.pk)}?strategy={form.strategy_index}")

    def _form(self, request: HttpRequest, editor: QoSEditor, params: Any) -> QoSDraftForm:
        read_only = editor.draft is None or not self.has_change_permission(request)
        bound = params if request.method == "POST" and params is request.POST else None
        return QoSDraftForm(
            bound,
            texts=editor.data,
            config=editor.resource_qos,
            strategy=_int(params.get("strategy")),
            read_only=read_only,
        )

    def _render(
        self, request: HttpRequest, editor: QoSEditor, form: QoSDraftForm, refusals: list[Any]
    ) -> TemplateResponse:
        context = {
            **self.admin_site.each_context(request),
            "opts": self.model._meta,
            "title": f"QoS config draft · {editor.cluster.name}",
            "editor": editor,
            "form": form,
            "typed": form.typed_table(),
            "class_labels": form.class_labels(),
            "refusals": refusals,
            "can_edit": self.has_change_permission(request),
            "apply_url": apply_url(editor.cluster.pk) if editor.draft else None,
            "may_apply": request.user.has_perm("topology.apply_nodepolicy"),
            "nodes_shown": NODES_SHOWN,
        }
        status = 200 if not refusals and not form.errors else 400
        return TemplateResponse(
            request, "admin/topology/qosdraft/editor.html", context, status=status
        )


def _int(value: Any) -> int:
    try:
        return max(int(value), 0)
    except (TypeError, ValueError):
        return 0
