"""The admin's form for a Reservation from a what-if, and its answers as a request.

A pod is either a whole Pod manifest (JSON) or a Guaranteed pod of N CPUs and some
memory; owners are a label selector (`app=web,tier=db`) and/or a named object
(`Kind/namespace/name`). The what-if page can prefill it through the query string.
"""

from __future__ import annotations

import json
from typing import Any

from django import forms

from topology.editing.reservation import BEST_NODE, ReservationRequest
from topology.parsers.errors import FieldError
from topology.parsers.quantity import parse_quantity

DEFAULT_POD_NAME = "reserved-pod"


class ReservationForm(forms.Form):
    cpus = forms.IntegerField(
        required=False, min_value=1, help_text="exclusive CPUs of a Guaranteed pod"
    )
    memory = forms.CharField(required=False, initial="1Gi", help_text="a Kubernetes quantity")
    pod_manifest = forms.CharField(
        required=False,
        widget=forms.Textarea(attrs={"rows": 6, "cols": 80}),
        help_text="or a whole Pod manifest (JSON); wins over CPUs and memory",
    )
    pod_name = forms.CharField(required=False, initial=DEFAULT_POD_NAME)
    namespace = forms.CharField(required=False, initial="default")
    node = forms.CharField(initial=BEST_NODE, help_text="a node name, or `best`")
    owner_labels = forms.CharField(
        required=False, help_text="pods with these labels may use it: app=web,tier=db"
    )
    owner_object = forms.CharField(required=False, help_text="or one object: Kind/namespace/name")
    reservation_name = forms.CharField(required=False, help_text="default: <pod>-<node>")
    ttl = forms.CharField(required=False, help_text="Go duration (1h30m; 0 = never); default 24h")
    allocate_once = forms.BooleanField(required=False, initial=True)

    def clean_pod_manifest(self) -> dict[str, Any] | None:
        text = self.cleaned_data["pod_manifest"].strip()
        if not text:
            return None
        try:
            manifest = json.loads(text)
        except ValueError as exc:
            raise forms.ValidationError(f"not JSON: {exc}") from exc
        if not isinstance(manifest, dict):
            raise forms.ValidationError("a Pod manifest is a JSON object")
        return manifest

    def clean_memory(self) -> str:
        memory = self.cleaned_data["memory"].strip() or "1Gi"
        try:
            parse_quantity(memory)
        except FieldError as exc:
            raise forms.ValidationError(str(exc)) from exc
        return memory

    def clean(self) -> dict[str, Any]:
        data = super().clean() or {}
        if not data.get("pod_manifest") and not data.get("cpus"):
            raise forms.ValidationError("Give the CPUs (and memory) or a Pod manifest.")
        if not data.get("owner_labels") and not data.get("owner_object"):
            raise forms.ValidationError("Give an owner: a label selector or a named object.")
        return data


def reservation_request_of(data: dict[str, Any]) -> ReservationRequest:
    """The form's cleaned data as a request; the builder validates owners and ttl."""
    return ReservationRequest(
        pod=data.get("pod_manifest") or guaranteed_pod(data),
        node=data["node"].strip(),
        owners=_owners(data.get("owner_labels", ""), data.get("owner_object", "")),
        name=data.get("reservation_name", "").strip(),
        ttl=data.get("ttl", "").strip() or None,
        allocate_once=bool(data.get("allocate_once")),
    )


def guaranteed_pod(data: dict[str, Any]) -> dict[str, Any]:
    amounts = {"cpu": str(data["cpus"]), "memory": data.get("memory") or "1Gi"}
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": data.get("pod_name") or DEFAULT_POD_NAME,
            "namespace": data.get("namespace") or "default",
        },
        "spec": {
            "containers": [
                {"name": "main", "resources": {"requests": amounts, "limits": dict(amounts)}}
            ]
        },
    }


def _owners(labels: str, named: str) -> list[dict[str, Any]]:
    owners: list[dict[str, Any]] = []
    if labels.strip():
        pairs = [part.partition("=") for part in labels.split(",") if part.strip()]
        match = {key.strip(): value.strip() for key, _sep, value in pairs}
        owners.append({"labelSelector": {"matchLabels": match}})
    if named.strip():
        parts = named.strip().split("/")
        if len(parts) == 3:
            ref = dict(zip(("kind", "namespace", "name"), parts, strict=True))
        else:  # a bare name; anything else is left for the builder to refuse
            ref = {"name": parts[0]} if len(parts) == 1 else {}
        owners.append({"object": ref})
    return owners
