"""The editor form: a raw JSON textarea per ConfigMap data key, and typed fields for
resctrlQOS, cpuQOS and memoryQOS of every strategy × class.

Only the typed fields a person changed are applied (Django's `changed_data`), so a
value the form cannot show faithfully is never rewritten by accident; such a value
(a string where an integer goes, say) is shown disabled, to be fixed in the raw JSON.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from django import forms

from topology.choices import ResctrlClass
from topology.editing.slo_config.schema import CLASS_KEYS, TYPED_SECTIONS, FieldSpec
from topology.editing.slo_config.strategies import StrategyRef, strategies
from topology.editing.slo_config.typed_fields import MISSING, FieldRef, fits, typed_value
from topology.editing.slo_config.validation import CONFIGMAP_KEY

DATA_PREFIX = "data:"
REMOVE_PREFIX = "remove:"
_KIND_WORDS = {"bool": "true or false", "int": "an integer"}


class _TriState(forms.NullBooleanSelect):
    """not set / true / false, in the words of the JSON it edits."""

    def __init__(self) -> None:
        super().__init__(attrs={"class": "qos-typed"})
        self.choices = [("unknown", "·"), ("true", "true"), ("false", "false")]


@dataclass(frozen=True)
class TypedRow:
    section: str
    spec: FieldSpec
    cells: tuple[forms.BoundField, ...]  # one per class, in CLASS_KEYS order


@dataclass(frozen=True)
class TypedTable:
    strategy: StrategyRef
    rows: tuple[TypedRow, ...]


class QoSDraftForm(forms.Form):
    new_key = forms.CharField(required=False, max_length=253, label="add a data key")
    new_text = forms.CharField(
        required=False, strip=False, widget=forms.Textarea(attrs={"rows": 4})
    )
    strategy_names = forms.CharField(required=False, widget=forms.HiddenInput)
    strategy = forms.IntegerField(required=False, min_value=0, widget=forms.HiddenInput)

    def __init__(
        self,
        *args: Any,
        texts: Mapping[str, str],
        config: Any,
        strategy: int = 0,
        read_only: bool = False,
        **kwargs: Any,
    ) -> None:
        super().__init__(*args, **kwargs)
        self.texts = dict(texts)
        self.config = config
        for key, text in sorted(self.texts.items()):
            self.fields[DATA_PREFIX + key] = _textarea(key, text)
            self.fields[REMOVE_PREFIX + key] = forms.BooleanField(required=False, label="remove")
        self.strategies = [ref for ref, _body in strategies(config)] if config is not None else []
        self.fields["strategy_names"].initial = json.dumps([ref.name for ref in self.strategies])
        self.fields["strategy"].initial = strategy
        # One strategy's typed fields at a time: 84 fields each, well under Django's
        # DATA_UPLOAD_MAX_NUMBER_FIELDS even for a config with many node strategies.
        self.shown_strategy = next((r for r in self.strategies if r.index == strategy), None)
        if self.shown_strategy is not None:
            for field_ref in _refs(self.shown_strategy):
                self.fields[field_ref.name] = _typed_field(
                    field_ref, typed_value(config, field_ref)
                )
        if read_only:
            for field in self.fields.values():
                field.disabled = True

    def clean_new_key(self) -> str:
        key: str = self.cleaned_data["new_key"].strip()
        if key and not CONFIGMAP_KEY.match(key):
            raise forms.ValidationError("a ConfigMap key holds letters, digits, - _ and . only")
        if key in self.texts:
            raise forms.ValidationError(f"{key} exists already: edit it above")
        return key

    def submitted_texts(self) -> dict[str, str]:
        """The data as submitted: kept keys (browsers send CRLF; the stored text keeps LF),
        without the removed ones, plus the added one."""
        result = {}
        for key, before in self.texts.items():
            if self.cleaned_data.get(REMOVE_PREFIX + key):
                continue
            text = self.cleaned_data.get(DATA_PREFIX + key) or ""
            same = text.replace("\r\n", "\n") == before.replace("\r\n", "\n")
            result[key] = before if same else text.replace("\r\n", "\n")
        if self.cleaned_data.get("new_key"):
            result[self.cleaned_data["new_key"]] = self.cleaned_data.get("new_text") or ""
        return result

    def typed_changes(self) -> dict[FieldRef, Any]:
        """The typed fields changed from what was shown; None means "remove the key"."""
        return {
            FieldRef.from_name(name): self.cleaned_data.get(name)
            for name in self.changed_data
            if name.startswith("t:")
        }

    @property
    def strategy_index(self) -> int:
        return self.shown_strategy.index if self.shown_strategy is not None else 0

    def submitted_strategy_names(self) -> list[str]:
        try:
            names = json.loads(self.cleaned_data.get("strategy_names") or "[]")
        except ValueError:
            return []
        return [str(name) for name in names] if isinstance(names, list) else []

    def data_fields(self) -> list[tuple[str, forms.BoundField, forms.BoundField]]:
        return [
            (key, self[DATA_PREFIX + key], self[REMOVE_PREFIX + key]) for key in sorted(self.texts)
        ]

    def typed_table(self) -> TypedTable | None:
        """The shown strategy: a row per typed field and a cell per class, for the template."""
        ref = self.shown_strategy
        if ref is None:
            return None
        rows = tuple(
            TypedRow(
                section,
                spec,
                tuple(
                    self[FieldRef(ref.index, qos_class, section, spec.key).name]
                    for qos_class in CLASS_KEYS
                ),
            )
            for section, specs in TYPED_SECTIONS.items()
            for spec in specs
        )
        return TypedTable(ref, rows)

    @staticmethod
    def class_labels() -> list[str]:
        return [str(ResctrlClass(key).label) for key in CLASS_KEYS]


def _refs(ref: StrategyRef) -> list[FieldRef]:
    return [
        FieldRef(ref.index, qos_class, section, spec.key)
        for qos_class in CLASS_KEYS
        for section, specs in TYPED_SECTIONS.items()
        for spec in specs
    ]


def _textarea(key: str, text: str) -> forms.CharField:
    rows = min(max(text.count("\n") + 2, 4), 40)
    return forms.CharField(
        required=False,
        strip=False,
        initial=text,
        label=key,
        widget=forms.Textarea(
            attrs={
                "rows": rows,
                "cols": 100,
                "spellcheck": "false",
                "class": "qos-json vLargeTextField",
            }
        ),
    )


def _typed_field(ref: FieldRef, value: Any) -> forms.Field:
    spec = ref.spec
    initial = None if value is MISSING else value
    help_text = spec.range_text
    if not fits(spec, value):
        return forms.CharField(
            required=False,
            disabled=True,
            initial=json.dumps(value),
            help_text=f"not {_KIND_WORDS[spec.kind]}: edit the raw JSON",
            widget=forms.TextInput(attrs={"size": 6, "class": "qos-typed qos-unfit"}),
        )
    if spec.kind == "bool":
        return forms.NullBooleanField(required=False, initial=initial, widget=_TriState())
    return forms.IntegerField(
        required=False,
        initial=initial,
        help_text=help_text,
        widget=forms.NumberInput(
            attrs={"class": "qos-typed", "style": "width: 6em", "title": help_text}
        ),
    )
