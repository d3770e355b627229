"""Admin for each cluster's scheduler configurations (KubeSchedulerConfiguration documents).

A document is checked when saved: one that cannot be read is refused with the field at
fault, so every stored document yields profiles. The profiles it yields are listed on
its page, with the system each `schedulerName` maps to and the arguments in force.
"""

from __future__ import annotations

from typing import Any

from django import forms
from django.contrib import admin
from django.http import HttpRequest
from django.utils.html import format_html, format_html_join

from scheduler_api.engine import ProfileError
from topology.models import SchedulerConfiguration
from topology.parsers.scheduler_config import profiles_from_text


class SchedulerConfigurationForm(forms.ModelForm):
    upload = forms.FileField(
        required=False,
        help_text="or upload the file (kube-scheduler's --config, or `kubectl get configmap "
        "-o yaml` of the ConfigMap holding it); it replaces the text above",
    )

    class Meta:
        model = SchedulerConfiguration
        fields = ["cluster", "name", "document"]
        widgets = {
            "document": forms.Textarea(attrs={"rows": 20, "cols": 90, "spellcheck": "false"})
        }

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        if "document" in self.fields:  # absent when the document is shown read-only
            self.fields["document"].required = False  # the upload may give it instead

    def clean(self) -> dict[str, Any]:
        data = super().clean()
        upload = data.get("upload")
        if upload is None and not data.get("document"):
            self.add_error("document", "paste the document or upload its file")
            return data
        if upload is not None:
            try:
                data["document"] = upload.read().decode("utf-8")
            except UnicodeDecodeError:
                self.add_error("upload", "the file is not UTF-8 text")
                return data
            self.instance.document = data["document"]
        document = data.get("document")
        if document:
            try:
                profiles_from_text(document, source=data.get("name") or "document")
            except ProfileError as error:
                self.add_error("upload" if upload is not None else "document", str(error))
        return data


@admin.register(SchedulerConfiguration)
class SchedulerConfigurationAdmin(admin.ModelAdmin):
    form = SchedulerConfigurationForm
    list_display = ["name", "cluster", "origin", "profile_names", "updated_at"]
    list_filter = ["cluster"]
    readonly_fields = ["profiles"]
    fields = ["cluster", "name", "document", "upload", "profiles"]

    def get_fields(
        self, request: HttpRequest, obj: SchedulerConfiguration | None = None
    ) -> list[str]:
        if obj is not None and obj.synced_from:
            return ["cluster", "name", "synced_from", "resource_version", "document", "profiles"]
        return list(self.fields)

    def has_change_permission(
        self, request: HttpRequest, obj: SchedulerConfiguration | None = None
    ) -> bool:
        """A synced document is the cluster's: shown, never edited here (the next sync
        would undo the edit). Change the ConfigMap, or name another in the connection."""
        if obj is not None and obj.synced_from:
            return False
        return super().has_change_permission(request, obj)

    @admin.display(description="origin")
    def origin(self, obj: SchedulerConfiguration) -> str:
        return f"synced from ConfigMap {obj.synced_from}" if obj.synced_from else "uploaded"

    @admin.display(description="profiles (schedulerName → system)")
    def profile_names(self, obj: SchedulerConfiguration) -> str:
        try:
            profiles = profiles_from_text(obj.document, source=obj.name)
        except ProfileError as error:
            return f"unreadable: {error}"
        return ", ".join(f"{p.scheduler_name} → {p.system.value}" for p in profiles)

    @admin.display(description="profiles it yields")
    def profiles(self, obj: SchedulerConfiguration) -> str:
        if not obj.pk:
            return "shown once saved"
        try:
            profiles = profiles_from_text(obj.document, source=obj.name)
        except ProfileError as error:
            return f"unreadable: {error}"
        rows = format_html_join(
            "",
            "<tr><th>{}</th><td>{}</td><td><code>{}</code></td></tr>",
            ((p.scheduler_name, p.system.value, p.arguments() or "—") for p in profiles),
        )
        return format_html(
            "<table><tr><th>schedulerName</th><th>system</th><th>arguments</th></tr>{}</table>",
            rows,
        )
