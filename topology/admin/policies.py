"""Admin for desired node policies and the reference pods their effect is previewed with.

- The change page shows observed against desired per field, the exact merge patch,
  the policy's errors (which block saving) and warnings, and "Apply to cluster…"
  (the write-back's confirm page) for those allowed to apply.
- The list shows what each policy would change.
- "Bulk edit by selector" sets fields on every node a label selector matches, in one
  transaction, after showing which nodes match and what changes.
- "Preview effect" re-runs the engine with the drafts against the reference pods.

The views stay thin: reads and writes go through `topology.services.policies.node_policies`
and `topology.services.policies.preview`.
"""

from __future__ import annotations

import json
from typing import Any

from django import forms
from django.contrib import admin, messages
from django.core.exceptions import PermissionDenied
from django.db.models import QuerySet
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect
from django.template.response import TemplateResponse
from django.urls import NoReverseMatch, URLPattern, path, reverse
from django.utils.html import format_html, format_html_join
from django.utils.safestring import mark_safe

from topology.choices import (
    KoordNUMATopologyPolicy,
    NodeCPUBindPolicy,
    NUMAAllocateStrategy,
    ReservationApplyPolicy,
)
from topology.editing.node_policies.label_selectors import SelectorError, parse_selector
from topology.models import Cluster, NodePolicy, ReferencePod
from topology.services.policies.node_policies import (
    POLICY_FIELDS,
    BulkEditError,
    NodePolicyError,
    PolicyIssue,
    draft_policies_for_selector,
    node_merge_patch,
    node_policies_bulk_edit,
    node_policy_diff,
    node_policy_issues,
)
from topology.services.policies.preview import preview_policy_effect, shape_of
from topology.services.whatif.service import WhatIfInputError, pod_from_manifest

APPLY_PERMISSION = "topology.apply_nodepolicy"
PREVIEW_PERMISSION = "scheduler_api.run_whatif"
CONFIRM_APPLY_URL = "admin:topology_applyrecord_confirm_node"
RESERVATION_COUNT_HELP = (
    "CPUs to reserve by count; koordlet picks them (kubelet's takeByTopology). "
    "0 removes the node.koordinator.sh/reservation annotation."
)


def apply_url(policy: NodePolicy) -> str | None:
    """The write-back's confirm page for this policy, when that page is installed."""
    try:
        return reverse(CONFIRM_APPLY_URL, args=[policy.pk])
    except NoReverseMatch:
        return None


LEAVE_AS_OBSERVED = "— leave as observed —"
# Koordinator's None policy is the empty string, which a form cannot tell from "nothing
# chosen": the form offers it as "None" and stores "" (null stays "leave as observed").
KOORD_NONE_CHOICE = "None"


def _numa_policy_choices() -> list[tuple[str, str]]:
    return [("", LEAVE_AS_OBSERVED)] + [
        (value or KOORD_NONE_CHOICE, str(label)) for value, label in KoordNUMATopologyPolicy.choices
    ]


class NUMAPolicyField(forms.TypedChoiceField):
    """ "" → null (leave as observed); "None" → "" (Koordinator's None policy)."""

    def __init__(self, **kwargs: Any) -> None:
        kwargs.pop("max_length", None)
        super().__init__(
            choices=_numa_policy_choices(),
            coerce=lambda value: "" if value == KOORD_NONE_CHOICE else value,
            empty_value=None,
            **kwargs,
        )

    def prepare_value(self, value: Any) -> Any:
        return KOORD_NONE_CHOICE if value == "" else value


class NodePolicyForm(forms.ModelForm):
    """The policy's rules run on save: an error is shown on its field and nothing is saved."""

    numa_topology_policy = NUMAPolicyField(
        required=False,
        label="NUMA topology policy",
        help_text="Koordinator's None removes the label",
    )

    class Meta:
        model = NodePolicy
        fields = ["node", *POLICY_FIELDS]
        help_texts = {"reservation_cpu_count": RESERVATION_COUNT_HELP}

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        for name in ("numa_allocate_strategy", "cpu_bind_policy", "reservation_apply_policy"):
            field = self.fields.get(name)
            if isinstance(field, forms.ChoiceField):
                field.choices = [("", LEAVE_AS_OBSERVED), *list(field.choices)[1:]]
        awareness = self.fields.get("crane_topology_awareness")
        if awareness is not None:
            awareness.widget.choices = [
                ("unknown", LEAVE_AS_OBSERVED),
                ("true", "true"),
                ("false", "false"),
            ]

    def clean(self) -> dict[str, Any]:
        cleaned = super().clean()
        node = cleaned.get("node") or getattr(self.instance, "node", None)
        if node is None or self.errors:
            return cleaned
        draft = NodePolicy(node=node, **{f: cleaned.get(f) for f in POLICY_FIELDS})
        draft.reservation_cpus = draft.reservation_cpus or ""
        draft.reservation_apply_policy = draft.reservation_apply_policy or ""
        self.policy_issues = node_policy_issues(draft)
        for issue in self.policy_issues:
            if issue.is_error:
                self.add_error(issue.field if issue.field in self.fields else None, issue.message)
        return cleaned


def _diff_html(policy: NodePolicy) -> str:
    changed = [d for d in node_policy_diff(policy) if d.changed]
    if not changed:
        return format_html("<span>{}</span>", "no change")
    return format_html_join(
        mark_safe("<br>"),
        "<code>{}</code>: {} → <strong>{}</strong>",
        ((d.key, d.observed or "∅", d.desired or "∅ (removed)") for d in changed),
    )


@admin.register(NodePolicy)
class NodePolicyAdmin(admin.ModelAdmin):
    """Desired state per node; observed against desired on every page."""

    form = NodePolicyForm
    change_form_template = "admin/topology/nodepolicy/change_form.html"
    change_list_template = "admin/topology/nodepolicy/change_list.html"
    list_display = [
        "node",
        "numa_topology_policy",
        "numa_allocate_strategy",
        "cpu_bind_policy",
        "crane_topology_awareness",
        "reservation_cpus",
        "reservation_cpu_count",
        "changes",
        "updated_at",
    ]
    list_filter = ["node__cluster", "numa_topology_policy", "cpu_bind_policy"]
    list_select_related = ["node", "node__cluster"]
    search_fields = ["node__name"]
    autocomplete_fields = ["node"]
    actions = ["preview_effect"]

    @admin.display(description="observed → desired")
    def changes(self, policy: NodePolicy) -> str:
        return _diff_html(policy)

    def get_urls(self) -> list[URLPattern]:
        own = [
            path(
                "bulk-edit/",
                self.admin_site.admin_view(self.bulk_edit_view),
                name="topology_nodepolicy_bulk_edit",
            ),
        ]
        return own + super().get_urls()

    def has_preview_permission(self, request: HttpRequest) -> bool:
        return request.user.has_perm(PREVIEW_PERMISSION)

    def change_view(
        self,
        request: HttpRequest,
        object_id: str,
        form_url: str = "",
        extra_context: dict[str, Any] | None = None,
    ) -> HttpResponse:
        policy = self.get_object(request, object_id)
        context = dict(extra_context or {})
        if policy is not None:
            context.update(self.review_context(request, policy))
        return super().change_view(request, object_id, form_url, context)

    def review_context(self, request: HttpRequest, policy: NodePolicy) -> dict[str, Any]:
        issues = node_policy_issues(policy)
        can_apply = request.user.has_perm(APPLY_PERMISSION)
        patch = node_merge_patch(policy)
        return {
            "policy_diff": node_policy_diff(policy),
            "policy_patch": patch,
            "policy_patch_json": json.dumps(patch, indent=2, ensure_ascii=False),
            "policy_issues": issues,
            "apply_allowed": not any(i.is_error for i in issues),
            "apply_url": apply_url(policy) if can_apply else None,
            "can_apply": can_apply,
        }

    def save_model(self, request: HttpRequest, obj: NodePolicy, form: Any, change: bool) -> None:
        super().save_model(request, obj, form, change)
        for issue in getattr(form, "policy_issues", []):
            if not issue.is_error:
                messages.warning(request, f"{obj.node.name}: {issue.message}")

    @admin.action(
        description="Preview the effect of the selected policies", permissions=["preview"]
    )
    def preview_effect(self, request: HttpRequest, queryset: QuerySet[NodePolicy]) -> HttpResponse:
        policies = list(queryset.select_related("node", "node__cluster"))
        clusters = {p.node.cluster for p in policies}
        if len(clusters) != 1:
            self.message_user(request, "Select policies of one cluster.", messages.ERROR)
            return HttpResponseRedirect(request.get_full_path())
        (cluster,) = clusters
        preview = preview_policy_effect(cluster=cluster, policies=policies)
        context = {
            **self.admin_site.each_context(request),
            "opts": self.model._meta,
            "title": f"Effect of {len(policies)} draft policies on {cluster.name}",
            "preview": preview,
        }
        return TemplateResponse(request, "admin/topology/nodepolicy/preview.html", context)

    def bulk_edit_view(self, request: HttpRequest) -> HttpResponse:
        if not (self.has_add_permission(request) and self.has_change_permission(request)):
            raise PermissionDenied
        form = BulkEditForm(request.POST or None)
        context = {
            **self.admin_site.each_context(request),
            "opts": self.model._meta,
            "title": "Bulk edit node policies by label selector",
            "form": form,
            "can_preview": self.has_preview_permission(request),
        }
        if request.method == "POST" and form.is_valid():
            if "_save" in request.POST:
                saved = self._bulk_save(request, form)
                if saved is not None:
                    return saved
            context.update(self._bulk_review(request, form))
        return TemplateResponse(request, "admin/topology/nodepolicy/bulk_edit.html", context)

    def _bulk_review(self, request: HttpRequest, form: BulkEditForm) -> dict[str, Any]:
        """Which nodes match, what each would change, and (if asked) the effect."""
        cluster, selector, values = form.cleaned_data["cluster"], form.selector, form.values()
        drafts = draft_policies_for_selector(cluster=cluster, selector=selector, values=values)
        rows = [(d, node_policy_diff(d), node_policy_issues(d)) for d in drafts]
        preview = None
        if "_preview" in request.POST and drafts and self.has_preview_permission(request):
            try:
                preview = preview_policy_effect(cluster=cluster, policies=drafts)
            except WhatIfInputError as error:
                form.add_error(None, f"preview failed: {error}")
        return {"matching": rows, "preview": preview, "reviewed": True}

    def _bulk_save(self, request: HttpRequest, form: BulkEditForm) -> HttpResponse | None:
        cluster = form.cleaned_data["cluster"]
        try:
            result = node_policies_bulk_edit(
                cluster=cluster, selector=form.selector, values=form.values()
            )
        except (BulkEditError, NodePolicyError, SelectorError) as error:
            form.add_error(None, _bulk_error_text(error))
            return None
        _report_bulk(request, result.created, result.updated, result.warnings)
        changelist = reverse("admin:topology_nodepolicy_changelist")
        return HttpResponseRedirect(f"{changelist}?node__cluster__id__exact={cluster.pk}")


def _bulk_error_text(error: Exception) -> str:
    if isinstance(error, BulkEditError):
        parts = [
            f"{node}: " + "; ".join(m for messages_ in errors.values() for m in messages_)
            for node, errors in sorted(error.node_errors.items())
        ]
        return "Nothing was saved. " + " | ".join(parts)
    if isinstance(error, NodePolicyError):
        return "Nothing was saved. " + str(error)
    return f"Selector: {error}"


def _report_bulk(
    request: HttpRequest,
    created: list[str],
    updated: list[str],
    warnings: dict[str, list[PolicyIssue]],
) -> None:
    if not created and not updated:
        messages.warning(request, "No node matches the selector: nothing was saved.")
        return
    messages.success(
        request,
        f"Saved the desired policy of {len(created) + len(updated)} nodes "
        f"({len(created)} new, {len(updated)} updated).",
    )
    for node, issues in sorted(warnings.items()):
        for issue in issues:
            messages.warning(request, f"{node}: {issue.message}")


KEEP = "__keep__"
OBSERVED = "__observed__"
EMPTY = "__empty__"  # a real value "" (Koordinator's None policy, an unset applyPolicy)
_KEEP_CHOICES = [(KEEP, "— don't change —"), (OBSERVED, "leave as observed (no desired value)")]


def _choices(choices: list[tuple[str, str]]) -> list[tuple[str, str]]:
    """ "" would read like a missing field; it gets a sentinel of its own."""
    return [(value or EMPTY, label) for value, label in choices]


def _policy_choice(label: str, choices: list[tuple[str, str]]) -> forms.ChoiceField:
    return forms.ChoiceField(
        label=label, choices=[*_KEEP_CHOICES, *_choices(choices)], initial=KEEP, required=False
    )


def _chosen(value: str | None) -> Any:
    """A choice as the policy value; KEEP for blank (a field the request left out)."""
    if not value or value == KEEP:
        return KEEP
    return {OBSERVED: None, EMPTY: ""}.get(value, value)


class BulkEditForm(forms.Form):
    """The fields to set on every matching node; "don't change" leaves a field alone."""

    cluster = forms.ModelChoiceField(queryset=Cluster.objects.order_by("name"))
    selector_text = forms.CharField(
        label="Label selector",
        max_length=2000,
        help_text="kubectl style: key=value, key!=value, key in (a,b), key notin (a,b), "
        "key, !key; comma-separated requirements are ANDed.",
        widget=forms.TextInput(attrs={"size": 60, "placeholder": "node-role=db,zone in (a,b)"}),
    )
    numa_topology_policy = _policy_choice(
        "node.koordinator.sh/numa-topology-policy", list(KoordNUMATopologyPolicy.choices)
    )
    numa_allocate_strategy = _policy_choice(
        "node.koordinator.sh/numa-allocate-strategy", list(NUMAAllocateStrategy.choices)
    )
    cpu_bind_policy = _policy_choice(
        "node.koordinator.sh/cpu-bind-policy", list(NodeCPUBindPolicy.choices)
    )
    crane_topology_awareness = _policy_choice(
        "topology.crane.io/topology-awareness", [("true", "true"), ("false", "false")]
    )
    reservation_cpus = forms.CharField(
        label="Reserve CPUs (cpulist)", required=False, help_text="blank: don't change"
    )
    reservation_cpu_count = forms.IntegerField(
        label="Reserve CPUs (count)",
        required=False,
        min_value=0,
        help_text="blank: don't change. " + RESERVATION_COUNT_HELP,
    )
    reservation_apply_policy = forms.ChoiceField(
        label="Reservation applyPolicy",
        choices=[(KEEP, "— don't change —"), (EMPTY, "unset"), *ReservationApplyPolicy.choices],
        initial=KEEP,
        required=False,
    )

    @property
    def selector(self) -> str:
        return str(self.cleaned_data.get("selector_text", ""))

    def clean_selector_text(self) -> str:
        text = str(self.cleaned_data["selector_text"])
        try:
            parse_selector(text)
        except SelectorError as error:
            raise forms.ValidationError(f"Selector: {error}") from error
        return text

    def clean(self) -> dict[str, Any]:
        cleaned = super().clean()
        if cleaned.get("reservation_cpus") and cleaned.get("reservation_cpu_count") is not None:
            self.add_error("reservation_cpu_count", "Reserve by cpulist or by count, not both.")
        if not self.errors and not self.values():
            raise forms.ValidationError("Choose at least one field to set.")
        return cleaned

    def values(self) -> dict[str, Any]:
        """The policy fields to set, as NodePolicy values."""
        data, values = self.cleaned_data, {}
        for name in ("numa_topology_policy", "numa_allocate_strategy", "cpu_bind_policy"):
            if (chosen := _chosen(data.get(name))) != KEEP:
                values[name] = chosen
        if (awareness := _chosen(data.get("crane_topology_awareness"))) != KEEP:
            values["crane_topology_awareness"] = None if awareness is None else awareness == "true"
        if data.get("reservation_cpus"):
            values.update(reservation_cpus=data["reservation_cpus"], reservation_cpu_count=None)
        elif data.get("reservation_cpu_count") is not None:
            values.update(reservation_cpu_count=data["reservation_cpu_count"], reservation_cpus="")
        if (apply_policy := _chosen(data.get("reservation_apply_policy"))) != KEEP:
            values["reservation_apply_policy"] = apply_policy or ""
        return values


class ReferencePodForm(forms.ModelForm):
    """A saved manifest must be a Pod the engine can read."""

    class Meta:
        model = ReferencePod
        fields = ["cluster", "name", "cpus", "memory", "manifest"]

    def clean(self) -> dict[str, Any]:
        cleaned = super().clean()
        if self.errors:
            return cleaned
        draft = ReferencePod(**{f: cleaned.get(f) for f in self.Meta.fields})
        if draft.cluster is None and _global_name_taken(draft.name, self.instance.pk):
            # The unique constraint does not see it: NULL clusters are distinct in SQL.
            self.add_error("name", "A reference pod for every cluster already has this name.")
            return cleaned
        try:
            pod_from_manifest(shape_of(draft).manifest)
        except WhatIfInputError as error:
            field = "manifest" if cleaned.get("manifest") else "memory"
            self.add_error(field, str(error))
        return cleaned


def _global_name_taken(name: str, own_pk: int | None) -> bool:
    return ReferencePod.objects.filter(cluster__isnull=True, name=name).exclude(pk=own_pk).exists()


@admin.register(ReferencePod)
class ReferencePodAdmin(admin.ModelAdmin):
    """Pods whose placement a policy preview compares; none saved: 4, 8 and 16 CPUs."""

    form = ReferencePodForm
    list_display = ["name", "cluster_name", "cpus", "memory", "has_manifest"]
    list_filter = ["cluster"]
    list_select_related = ["cluster"]
    search_fields = ["name"]

    @admin.display(description="cluster")
    def cluster_name(self, reference: ReferencePod) -> str:
        return reference.cluster.name if reference.cluster else "every cluster"

    @admin.display(boolean=True, description="manifest")
    def has_manifest(self, reference: ReferencePod) -> bool:
        return bool(reference.manifest)
