"""Admin for write-back: the audit history (read-only) and the "Apply to cluster…" pages.

Each confirm page shows the exact body and the diff, then a "Confirm apply" POST
(CSRF-protected, `topology.apply_nodepolicy` required, 403 otherwise). The form
carries the body's fingerprint: if the mirror or the draft changed since the page
was shown, nothing is queued and the page asks for a second look. A confirmed apply
becomes a pending audit row, its task is queued on commit, and the browser lands on
the row's page, which refreshes until the result is in.
"""

from __future__ import annotations

import json
from typing import Any

from django.contrib import admin, messages
from django.core.exceptions import PermissionDenied
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect
from django.shortcuts import get_object_or_404
from django.template.response import TemplateResponse
from django.urls import URLPattern, path, reverse
from django.utils.html import format_html

from topology.admin.base import ReadOnlyAdmin
from topology.choices import ApplyStatus
from topology.editing.reservation import ReservationInputError
from topology.forms.reservation import ReservationForm, reservation_request_of
from topology.models import ApplyRecord, Cluster, NodePolicy
from topology.services.policies.writeback import (
    ApplyPlan,
    plan_node_policy_apply,
    plan_qos_apply,
    plan_reservation_create,
    request_plan,
)

APPLY_PERMISSION = "topology.apply_nodepolicy"
PREVIEW_PERMISSION = "scheduler_api.run_whatif"
TEMPLATES = "admin/topology/applyrecord"


@admin.register(ApplyRecord)
class ApplyRecordAdmin(ReadOnlyAdmin):
    list_display = [
        "requested_at",
        "cluster_name",
        "kind",
        "object_name",
        "status_badge",
        "username",
        "finished_at",
    ]
    list_filter = [("cluster_name", admin.AllValuesFieldListFilter), "kind", "status"]
    search_fields = ["object_name", "username", "message"]
    date_hierarchy = "requested_at"
    fields = [
        "status_badge",
        "message",
        "cluster_name",
        "kind",
        "object_name",
        "username",
        "requested_at",
        "queued_at",
        "times_queued",
        "finished_at",
        "resource_version_before",
        "resource_version_after",
        "sent_body",
        "diff_text",
        "cluster_body",
    ]
    readonly_fields = fields
    change_form_template = f"{TEMPLATES}/change_form.html"

    @admin.display(description="status", ordering="status")
    def status_badge(self, record: ApplyRecord) -> str:
        status = ApplyStatus(record.status)
        return format_html(
            '<span class="apply-status apply-{}" style="color:{}">{} {}</span>',
            status.value,
            status.colour,
            status.mark,
            status.label,
        )

    @admin.display(description="body sent (ours)")
    def sent_body(self, record: ApplyRecord) -> str:
        return _pre(json.dumps(record.patch, indent=2, sort_keys=True), "apply-ours")

    @admin.display(description="diff (cluster → after apply)")
    def diff_text(self, record: ApplyRecord) -> str:
        return _pre(record.diff or "(none)", "apply-diff")

    @admin.display(description="cluster's version (theirs)")
    def cluster_body(self, record: ApplyRecord) -> str:
        if record.cluster_version is None:
            return "—"
        return _pre(json.dumps(record.cluster_version, indent=2, sort_keys=True), "apply-theirs")

    def changelist_view(self, request: HttpRequest, extra_context: Any = None) -> HttpResponse:
        """The history, with "Reserve on <cluster>…" for those who may preview one."""
        context = dict(extra_context or {})
        if request.user.has_perm(PREVIEW_PERMISSION):
            context["reserve_clusters"] = Cluster.objects.only("pk", "name")
        return super().changelist_view(request, extra_context=context)

    # Confirm pages ---------------------------------------------------------------------

    def get_urls(self) -> list[URLPattern]:
        wrap = self.admin_site.admin_view
        return [
            path(
                "confirm/node/<int:policy_pk>/",
                wrap(self.confirm_node_view),
                name="topology_applyrecord_confirm_node",
            ),
            path(
                "confirm/qos/<int:cluster_pk>/",
                wrap(self.confirm_qos_view),
                name="topology_applyrecord_confirm_qos",
            ),
            path(
                "confirm/reservation/<int:cluster_pk>/",
                wrap(self.confirm_reservation_view),
                name="topology_applyrecord_confirm_reservation",
            ),
            *super().get_urls(),
        ]

    def confirm_node_view(self, request: HttpRequest, policy_pk: int) -> HttpResponse:
        _require_apply(request)
        policy = get_object_or_404(NodePolicy.objects.select_related("node__cluster"), pk=policy_pk)
        back = reverse("admin:topology_nodepolicy_change", args=[policy.pk])
        title = f"Apply the desired policy of node {policy.node.name} to {policy.node.cluster}"
        return self._confirm(request, plan_node_policy_apply(policy), title=title, back=back)

    def confirm_qos_view(self, request: HttpRequest, cluster_pk: int) -> HttpResponse:
        _require_apply(request)
        cluster = get_object_or_404(Cluster, pk=cluster_pk)
        back = reverse("admin:topology_qosdraft_editor", args=[cluster.pk])
        title = f"Apply the QoS draft to {cluster.name}'s slo-controller-config"
        return self._confirm(request, plan_qos_apply(cluster), title=title, back=back)

    def confirm_reservation_view(self, request: HttpRequest, cluster_pk: int) -> HttpResponse:
        """A form (prefilled from the query string, e.g. by the what-if page), its preview
        with the exact object, then the same confirm step as every other apply.

        Operators (what-if) may fill it in and preview; only the admin role confirms.
        """
        _require(request, PREVIEW_PERMISSION, "Previewing a Reservation")
        cluster = get_object_or_404(Cluster, pk=cluster_pk)
        form = ReservationForm(request.POST if request.method == "POST" else None,
                               initial=request.GET.dict())  # fmt: skip
        plan, verdict = None, None
        if form.is_bound and form.is_valid():
            try:
                planned = plan_reservation_create(
                    cluster=cluster, request=reservation_request_of(form.cleaned_data)
                )
            except ReservationInputError as error:
                for field, problems in error.field_errors.items():
                    form.add_error(None, f"{field}: {' '.join(problems)}")
            else:
                plan, verdict = planned.plan, planned.verdict
                if "confirm" in request.POST:
                    _require_apply(request)
                    response = self._confirmed(request, plan)
                    if response is not None:
                        return response
        context = {
            **self.admin_site.each_context(request),
            "title": f"Reserve a pod's resources on {cluster.name} (Koordinator Reservation)",
            "opts": self.model._meta,
            "cluster": cluster,
            "form": form,
            "plan": plan,
            "verdict": verdict,
            "can_apply": request.user.has_perm(APPLY_PERMISSION),
        }
        return TemplateResponse(request, f"{TEMPLATES}/reservation.html", context)

    def _confirm(
        self, request: HttpRequest, plan: ApplyPlan, *, title: str, back: str
    ) -> HttpResponse:
        if request.method == "POST":
            response = self._confirmed(request, plan)
            if response is not None:
                return response
        context = {
            **self.admin_site.each_context(request),
            "title": title,
            "opts": self.model._meta,
            "plan": plan,
            "back": back,
        }
        return TemplateResponse(request, f"{TEMPLATES}/confirm.html", context)

    def _confirmed(self, request: HttpRequest, plan: ApplyPlan) -> HttpResponse | None:
        """Queue (or record as refused) the plan that was shown; None: show it again."""
        if request.POST.get("digest") != plan.digest:
            messages.warning(
                request,
                "What would be written changed since this page was shown (the mirror or the "
                "draft moved on). Nothing was queued: check the body below and confirm again.",
            )
            return None
        record = request_plan(plan=plan, user=request.user)
        if record.status == ApplyStatus.ERROR:
            messages.error(request, record.message)
        else:
            messages.success(request, "Queued; this page shows the result when the task has run.")
        return HttpResponseRedirect(reverse("admin:topology_applyrecord_change", args=[record.pk]))


def _require(request: HttpRequest, permission: str, what: str) -> None:
    if not request.user.has_perm(permission):
        raise PermissionDenied(f"{what} needs {permission}.")


def _require_apply(request: HttpRequest) -> None:
    _require(request, APPLY_PERMISSION, "Applying to a cluster (the admin role)")


def _pre(text: str, css_class: str) -> str:
    return format_html('<pre class="{}" style="white-space:pre-wrap">{}</pre>', css_class, text)
