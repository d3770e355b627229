"""The what-if form: a pod described by container rows, or pasted as a manifest.

It is submitted with GET, so every input lives in the URL and a result can be
shared. A fixed number of container rows works without JavaScript; blank rows are
ignored. The rows and the scheduler knobs become a Pod manifest through the same
mapping the REST API uses (`compact_pod_manifest`), so both answer alike.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

import yaml
from django import forms
from django.conf import settings
from django.http import QueryDict

from scheduler_api.engine import (
    CPUBindPolicy,
    CPUExclusivePolicy,
    CraneCPUPolicy,
    KoordQoSClass,
)
from topology.parsers.errors import FieldError
from topology.parsers.names import DNS_SUBDOMAIN
from topology.parsers.quantity import to_base_units
from topology.parsers.yaml_documents import load_all
from topology.selectors.types import is_device
from topology.services.whatif.manifest import compact_pod_manifest
from topology.services.whatif.question import WhatIfQuestion
from topology.services.whatif.service import (
    SCHEDULER_NAME_PATTERN,
    SCHEDULERS,
    SCORING_STRATEGIES,
    WhatIfInputError,
    parse_weights,
)

CONTAINER_ROWS = 3
MANIFEST_MAX_CHARS = 6000  # it travels in the URL; browsers and proxies cap those near 8 KB
NOT_SET = ("", "not set")
DNS_LABEL = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")
QUALIFIED_NAME = re.compile(
    r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*"
    r"/[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$"
)
CONTAINER_ERROR = re.compile(r"^pod\.spec\.containers\[(\d+)\]")
OPTION_FIELDS = ("replicas", "scheduler", "scoring", "weights", "scheduler_name")
SCHEDULER_LABELS = {
    "auto": "auto: the pod's profile, else its marks, else each node's own",
    "default": "default: kube-scheduler, no topology plugin",
}


def _choices(values: Any) -> list[tuple[str, str]]:
    return [NOT_SET, *((str(v), str(v)) for v in values if str(v))]


def page_max_replicas() -> int:
    """The page answers while you wait: as many replicas as the API answers synchronously."""
    return int(settings.API_WHATIF_SYNC_MAX_REPLICAS)


class QuantityField(forms.CharField):
    """A Kubernetes quantity for `resource` ("16", "500m", "32Gi"), kept as written."""

    def __init__(self, resource: str, *, placeholder: str = "", **kwargs: Any) -> None:
        self.resource = resource
        attrs = {"placeholder": placeholder, "size": 7} if placeholder else {"size": 7}
        kwargs.setdefault("widget", forms.TextInput(attrs=attrs))
        super().__init__(required=False, max_length=32, **kwargs)

    def clean(self, value: Any) -> str:
        text: str = super().clean(value)
        if text:
            try:
                to_base_units(self.resource, text)
            except FieldError as error:
                raise forms.ValidationError(
                    f"{error} — write a Kubernetes quantity such as 4, 500m or 8Gi"
                ) from None
        return text


class ContainerForm(forms.Form):
    """One container row. Hugepages and devices are one amount: Kubernetes requires
    their requests to equal their limits."""

    name = forms.CharField(
        required=False, max_length=63, label="Name", widget=forms.TextInput(attrs={"size": 10})
    )
    cpu_request = QuantityField("cpu", label="CPU request", placeholder="16")
    cpu_limit = QuantityField("cpu", label="CPU limit", placeholder="16")
    memory_request = QuantityField("memory", label="Memory request", placeholder="32Gi")
    memory_limit = QuantityField("memory", label="Memory limit", placeholder="32Gi")
    hugepages_2mi = QuantityField("hugepages-2Mi", label="Hugepages 2Mi", placeholder="1Gi")
    hugepages_1gi = QuantityField("hugepages-1Gi", label="Hugepages 1Gi", placeholder="2Gi")
    device_name = forms.CharField(
        required=False,
        max_length=253,
        label="Device resource",
        widget=forms.TextInput(attrs={"placeholder": "nvidia.com/gpu", "size": 14}),
    )
    device_count = forms.IntegerField(
        required=False,
        min_value=1,
        max_value=1024,
        label="Devices",
        widget=forms.NumberInput(attrs={"size": 4}),
    )

    PAIRS = (("cpu", "cpu_request", "cpu_limit"), ("memory", "memory_request", "memory_limit"))
    HUGEPAGES = (("hugepages-2Mi", "hugepages_2mi"), ("hugepages-1Gi", "hugepages_1gi"))

    def is_blank(self) -> bool:
        """Nothing typed in this row (checked on the raw input, before cleaning)."""
        return not any(
            str(self.data.get(self.add_prefix(name), "")).strip() for name in self.fields
        )

    def clean_name(self) -> str:
        name: str = self.cleaned_data["name"].strip()
        if name and not DNS_LABEL.match(name):
            raise forms.ValidationError("lower-case letters, digits and '-' (a DNS label)")
        return name

    def clean_device_name(self) -> str:
        name: str = self.cleaned_data["device_name"].strip()
        if name and not (QUALIFIED_NAME.match(name) and is_device(name)):
            raise forms.ValidationError(
                "an extended resource such as nvidia.com/gpu (domain/name, not kubernetes.io)"
            )
        return name

    def clean(self) -> dict[str, Any]:
        data = super().clean() or {}
        for resource, request, limit in self.PAIRS:
            if data.get(request) and data.get(limit):
                if to_base_units(resource, data[request]) > to_base_units(resource, data[limit]):
                    self.add_error(request, "must not exceed the limit")
        if bool(data.get("device_name")) != bool(data.get("device_count")):
            missing = "device_count" if data.get("device_name") else "device_name"
            self.add_error(missing, "give both the device resource and how many")
        return data

    def compact(self, index: int) -> dict[str, Any]:
        """This row in the compact form `compact_pod_manifest` takes."""
        data = self.cleaned_data
        requests: dict[str, str] = {}
        limits: dict[str, str] = {}
        for resource, request, limit in self.PAIRS:
            if data.get(request):
                requests[resource] = data[request]
            if data.get(limit):
                limits[resource] = data[limit]
        exact = {resource: data[field] for resource, field in self.HUGEPAGES if data.get(field)}
        if data.get("device_name"):
            exact[data["device_name"]] = str(data["device_count"])
        return {
            "name": data.get("name") or f"container-{index}",
            "requests": {**requests, **exact},
            "limits": {**limits, **exact},
        }


class WhatIfForm(forms.Form):
    """The pod-level knobs, the run's options, and the alternative pasted manifest."""

    manifest = forms.CharField(
        required=False,
        max_length=MANIFEST_MAX_CHARS,
        label="Pod manifest (YAML or JSON)",
        help_text="When this box is not empty, the manifest is used and the container rows "
        "and annotation fields above are not.",
        widget=forms.Textarea(attrs={"rows": 8, "cols": 70, "spellcheck": "false"}),
    )
    name = forms.RegexField(
        re.compile(rf"^(?:{DNS_SUBDOMAIN.pattern})$"),
        required=False,
        max_length=253,
        label="Pod name",
        help_text="what a tracked prediction follows: the pod of this name (blank: whatif-pod)",
        error_messages={"invalid": "a pod name: lower-case letters, digits, '-' and '.'"},
        widget=forms.TextInput(attrs={"placeholder": "whatif-pod", "size": 18}),
    )
    namespace = forms.RegexField(
        DNS_LABEL,
        required=False,
        max_length=63,
        label="Namespace",
        error_messages={"invalid": "a namespace: lower-case letters, digits and '-'"},
        widget=forms.TextInput(attrs={"placeholder": "default", "size": 14}),
    )
    crane_cpu_policy = forms.ChoiceField(
        required=False,
        choices=_choices(CraneCPUPolicy),
        label="Crane CPU policy",
        help_text="annotation topology.crane.io/cpu-policy; exclusive pins whole cores",
    )
    crane_topology_awareness = forms.ChoiceField(
        required=False,
        choices=[NOT_SET, ("true", "true"), ("false", "false")],
        label="Crane topology awareness",
        help_text="annotation topology.crane.io/topology-awareness",
    )
    koordinator_qos_class = forms.ChoiceField(
        required=False,
        choices=_choices(KoordQoSClass),
        label="Koordinator QoS class",
        help_text="label koordinator.sh/qosClass; LSR and LSE get exclusive CPUs",
    )
    koordinator_cpu_bind_policy = forms.ChoiceField(
        required=False,
        choices=_choices(CPUBindPolicy),
        label="Koordinator CPU bind policy",
        help_text="scheduling.koordinator.sh/resource-spec",
    )
    koordinator_cpu_bind_required = forms.BooleanField(
        required=False,
        label="Bind policy required",
        help_text="checked: requiredCPUBindPolicy (hard); else preferred",
    )
    koordinator_cpu_exclusive_policy = forms.ChoiceField(
        required=False,
        choices=_choices(CPUExclusivePolicy),
        label="Koordinator CPU exclusive policy",
        help_text="resource-spec preferredCPUExclusivePolicy",
    )
    replicas = forms.IntegerField(
        required=False,
        min_value=0,
        label="Replicas",
        help_text="placed one after another; 0: verdicts only",
        widget=forms.NumberInput(attrs={"size": 5}),
    )
    scheduler_name = forms.RegexField(
        SCHEDULER_NAME_PATTERN,
        required=False,
        max_length=253,
        label="schedulerName",
        help_text="picks the cluster's scheduler profile (blank: the manifest's, else "
        "default-scheduler)",
        error_messages={"invalid": "a schedulerName: lower-case letters, digits, '-' and '.'"},
        widget=forms.TextInput(attrs={"placeholder": "default-scheduler", "size": 18}),
    )
    scheduler = forms.ChoiceField(
        required=False,
        choices=[(s, SCHEDULER_LABELS.get(s, s)) for s in SCHEDULERS],
        label="Judging system",
        help_text="anything but auto overrides the profile's system",
    )
    scoring = forms.ChoiceField(
        required=False,
        choices=[("", "default (LeastAllocated)"), *((s, s) for s in SCORING_STRATEGIES)],
        label="Scoring strategy",
    )
    weights = forms.CharField(
        required=False,
        max_length=200,
        label="Resource weights",
        help_text="optional, e.g. cpu=2,memory=1",
        widget=forms.TextInput(attrs={"placeholder": "cpu=2,memory=1", "size": 16}),
    )
    use_draft_policies = forms.BooleanField(
        required=False,
        label="Use draft node policies",
        help_text="judge nodes as if their saved, not yet applied, policies were applied",
    )

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        replicas = self.fields["replicas"]
        replicas.validators.append(
            _at_most(page_max_replicas(), "the API answers larger questions in the background")
        )
        replicas.widget.attrs["max"] = page_max_replicas()

    def clean_manifest(self) -> dict[str, Any] | None:
        text: str = self.cleaned_data["manifest"].strip()
        return parse_manifest(text) if text else None

    def clean_replicas(self) -> int:
        value = self.cleaned_data["replicas"]
        return 1 if value is None else int(value)

    def clean_scheduler(self) -> str:
        return self.cleaned_data["scheduler"] or "auto"

    def clean_weights(self) -> dict[str, int] | None:
        try:
            return parse_weights(self.cleaned_data["weights"]) or None
        except WhatIfInputError as error:
            raise forms.ValidationError(error.field_errors["weights"]) from None

    def scheduler_knobs(self) -> dict[str, Any]:
        """The pod's name and namespace and the annotation fields, in the compact form's
        vocabulary."""
        data = self.cleaned_data
        awareness = data.get("crane_topology_awareness")
        return {
            "name": data.get("name") or None,
            "namespace": data.get("namespace") or None,
            "crane_cpu_policy": data.get("crane_cpu_policy") or None,
            "crane_topology_awareness": None if not awareness else awareness == "true",
            "koordinator_qos_class": data.get("koordinator_qos_class") or None,
            "koordinator_cpu_bind_policy": data.get("koordinator_cpu_bind_policy") or None,
            "koordinator_cpu_bind_required": bool(data.get("koordinator_cpu_bind_required")),
            "koordinator_cpu_exclusive_policy": data.get("koordinator_cpu_exclusive_policy")
            or None,
        }


def _at_most(limit: int, why: str) -> Any:
    def check(value: int | None) -> None:
        if value is not None and value > limit:
            raise forms.ValidationError(f"at most {limit} on this page; {why}")

    return check


def parse_manifest(text: str) -> dict[str, Any]:
    """One Pod manifest from YAML or JSON text (JSON is YAML), or a clear error."""
    try:
        documents = [d for d in load_all(text) if d is not None]
    except yaml.YAMLError as error:
        mark = getattr(error, "problem_mark", None)
        where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark else ""
        problem = getattr(error, "problem", None) or "not valid YAML or JSON"
        raise forms.ValidationError(f"cannot read the manifest{where}: {problem}") from None
    if len(documents) != 1:
        raise forms.ValidationError(f"expected one Pod manifest, found {len(documents)} documents")
    manifest = documents[0]
    if not isinstance(manifest, dict):
        raise forms.ValidationError("expected a Pod manifest (a YAML/JSON object)")
    if manifest.get("kind", "Pod") != "Pod":
        raise forms.ValidationError(f"expected kind Pod, got {manifest.get('kind')!r}")
    return manifest


class WhatIfForms:
    """The pod form and its container rows, bound to a query string that asks something.

    A query without any of the form's fields (the page opened from the menu) leaves
    every form unbound: nothing to answer yet, and no errors shown.
    """

    def __init__(self, query: QueryDict | Mapping[str, Any] | None = None) -> None:
        data = query if query is not None and self.asks(query) else None
        self.bound = data is not None
        self.pod = WhatIfForm(data, initial={"replicas": 1, "scheduler": "auto"})
        self.rows = [ContainerForm(data, prefix=f"c{n}") for n in range(1, CONTAINER_ROWS + 1)]
        for row in self.rows[
            1:
        ]:  # examples in the first row only: in every row they read as values
            for field in row.fields.values():
                field.widget.attrs.pop("placeholder", None)

    @staticmethod
    def asks(query: Mapping[str, Any]) -> bool:
        rows = {
            f"c{n}-{name}"
            for n in range(1, CONTAINER_ROWS + 1)
            for name in ContainerForm.base_fields
        }
        return any(key in WhatIfForm.base_fields or key in rows for key in query)

    def uses_manifest(self) -> bool:
        return bool(str(self.pod.data.get("manifest", "")).strip())

    def used_rows(self) -> list[tuple[int, ContainerForm]]:
        """(row number, form) of the rows that describe a container; [] with a manifest."""
        if self.uses_manifest():
            return []
        return [(n, row) for n, row in enumerate(self.rows, start=1) if not row.is_blank()]

    def is_valid(self) -> bool:
        if not self.bound:
            return False
        rows = self.used_rows()
        valid = all([self.pod.is_valid(), *(row.is_valid() for _, row in rows)])
        if valid and not self.uses_manifest():
            valid = self._check_containers(rows)
        return valid

    def _check_containers(self, rows: list[tuple[int, ContainerForm]]) -> bool:
        if not rows:
            self.pod.add_error(None, "Describe at least one container, or paste a Pod manifest.")
            return False
        seen: set[str] = set()
        for number, row in rows:
            name = row.compact(number)["name"]
            if name in seen:
                row.add_error("name", f"another container is already named {name}")
            seen.add(name)
        return all(not row.errors for _, row in rows)

    def question(self) -> WhatIfQuestion:
        """The question (call after is_valid()); WhatIfInputError when the pod or an
        option cannot be run (`add_input_errors` puts them next to their fields)."""
        data = self.pod.cleaned_data
        manifest = data.get("manifest")
        if manifest is None:
            containers = [row.compact(number) for number, row in self.used_rows()]
            manifest = compact_pod_manifest(
                {"containers": containers, **self.pod.scheduler_knobs()}
            )
        return WhatIfQuestion.from_inputs(
            manifest,
            replicas=data["replicas"],
            scheduler=data["scheduler"],
            scheduler_name=data.get("scheduler_name") or None,
            scoring=data.get("scoring") or None,
            weights=data.get("weights"),
            from_manifest=data.get("manifest") is not None,
            use_draft_policies=bool(data.get("use_draft_policies")),
        )

    def add_input_errors(self, error: WhatIfInputError) -> None:
        """Put the service's per-field errors next to the fields they are about."""
        rows = [row for _, row in self.used_rows()]
        for key, messages in error.field_errors.items():
            if key in OPTION_FIELDS:
                self.pod.add_error(key, messages)
                continue
            path = key.removeprefix("pod").lstrip(".")
            text = [f"{path}: {m}" if path else m for m in messages]
            match = CONTAINER_ERROR.match(key)
            if self.uses_manifest():
                self.pod.add_error("manifest", text)
            elif match and int(match[1]) < len(rows):
                rows[int(match[1])].add_error(None, text)
            else:
                self.pod.add_error(None, text)

    def non_field_errors(self) -> list[str]:
        return list(self.pod.non_field_errors())
