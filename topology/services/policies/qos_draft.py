"""The desired slo-controller-config of a cluster: start, save and discard its draft; read
what would be written, what is wrong with it, the diff from the cluster and its effect.

The mirror does not keep `resource-qos-config` as text: its strategies are rows
(`QoSStrategy` with the verbatim body, `ResctrlSetting` per class). A draft starts
from that config rebuilt by `render_resource_qos`, in Koordinator's key order (the
rows sit in jsonb, which keeps no order); every other data key is copied verbatim.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from django.contrib.auth.base_user import AbstractBaseUser
from django.db import transaction

from topology.editing.slo_config.issues import ERROR, WARNING, QoSIssue
from topology.editing.slo_config.json_text import JSONProblem, data_diff, dump_json, parse_json
from topology.editing.slo_config.preview import NodeCache, SchemataPreview, schemata_preview
from topology.editing.slo_config.schema import canonical_order
from topology.editing.slo_config.strategies import RESOURCE_QOS_KEY, strategies
from topology.editing.slo_config.typed_fields import FieldRef, TypedChangeError, apply_typed_changes
from topology.editing.slo_config.validation import validate_qos_data
from topology.models import Cluster, QoSConfig, QoSDraft
from topology.selectors.qos import qos_node_caches
from topology.services.mirror.exporter import render_resource_qos

EMPTY_CONFIG: dict[str, Any] = {"clusterStrategy": {}}


class QoSDraftRefused(ValueError):
    """A save or start that stored nothing, and why (JSON problems carry line and column)."""

    def __init__(self, issues: Sequence[QoSIssue]) -> None:
        self.issues = list(issues)
        super().__init__("; ".join(f"{i.where}: {i.message}" for i in self.issues))


# ---- writes ----------------------------------------------------------------------------


@transaction.atomic
def qos_draft_start(*, cluster: Cluster, user: AbstractBaseUser | None) -> QoSDraft:
    """A draft equal to the mirrored ConfigMap, replacing any draft the cluster had."""
    config = QoSConfig.objects.filter(cluster=cluster).first()
    if config is None:
        raise QoSDraftRefused([_not_mirrored(cluster)])
    draft, _created = QoSDraft.objects.update_or_create(
        cluster=cluster,
        defaults={
            "data": observed_qos_data(config),
            "base_resource_version": config.resource_version,
            "updated_by": user,
        },
    )
    return draft


@transaction.atomic
def qos_draft_save(
    *, cluster: Cluster, data: Mapping[str, str], user: AbstractBaseUser | None
) -> QoSDraft:
    """Store the ConfigMap data as the draft. Refuses (stores nothing) on invalid JSON.

    Other problems (ranges, case, selectors…) are stored and reported by
    `qos_draft_issues`; errors among them block the apply, not the save. A key
    whose invalid text is unchanged from the cluster's is not refused: it was there
    before, and `qos_draft_issues` reports it as an error.
    """
    config = QoSConfig.objects.filter(cluster=cluster).first()
    observed = observed_qos_data(config) if config else {}
    refusals = _refusals(data, observed)
    if refusals:
        raise QoSDraftRefused(refusals)
    draft = QoSDraft.objects.select_for_update().filter(cluster=cluster).first()
    if draft is None:
        draft = QoSDraft(
            cluster=cluster, base_resource_version=config.resource_version if config else ""
        )
    draft.data = dict(data)
    draft.updated_by = user
    draft.save()
    return draft


def qos_draft_save_edit(
    *,
    cluster: Cluster,
    data: Mapping[str, str],
    typed_changes: Mapping[FieldRef, Any],
    strategy_names: Sequence[str],
    user: AbstractBaseUser | None,
) -> QoSDraft:
    """The editor's save: the raw texts, with the typed fields changed on top.

    `strategy_names` are the strategies the typed form was drawn for; if the raw
    JSON now lists others, a typed change could land on the wrong one, so it is
    refused. Without typed changes the texts are stored byte for byte.
    """
    if typed_changes:
        data = {**data, RESOURCE_QOS_KEY: _with_typed(data, typed_changes, strategy_names)}
    return qos_draft_save(cluster=cluster, data=data, user=user)


def qos_draft_discard(*, cluster: Cluster) -> bool:
    """Drop the cluster's draft; True if there was one."""
    deleted, _by_model = QoSDraft.objects.filter(cluster=cluster).delete()
    return deleted > 0


def _with_typed(
    data: Mapping[str, str], changes: Mapping[FieldRef, Any], strategy_names: Sequence[str]
) -> str:
    text = data.get(RESOURCE_QOS_KEY, dump_json(EMPTY_CONFIG))
    config, problem = parse_json(text)
    if problem is not None:
        raise QoSDraftRefused(
            [_json_refusal(RESOURCE_QOS_KEY, problem.message, problem.line, problem.column)]
        )
    names = [ref.name for ref, _body in strategies(config)]
    if names != list(strategy_names):
        raise QoSDraftRefused(
            [
                QoSIssue(
                    ERROR,
                    RESOURCE_QOS_KEY,
                    "the node strategies in the raw JSON differ from the ones the typed "
                    "fields were shown for; save the raw JSON alone first, then edit the fields",
                )
            ]
        )
    try:
        return dump_json(apply_typed_changes(config, changes))
    except TypedChangeError as exc:
        raise QoSDraftRefused([QoSIssue(ERROR, RESOURCE_QOS_KEY, str(exc))]) from None


def _refusals(data: Mapping[str, str], observed: Mapping[str, str]) -> list[QoSIssue]:
    refusals = []
    for key, text in data.items():
        if not isinstance(key, str) or not isinstance(text, str):
            refusals.append(QoSIssue(ERROR, str(key), "ConfigMap data maps text keys to text"))
            continue
        _value, problem = parse_json(text)
        if problem is not None and observed.get(key) != text:
            refusals.append(_json_refusal(key, problem.message, problem.line, problem.column))
    return refusals


def _json_refusal(key: str, message: str, line: int, column: int) -> QoSIssue:
    return QoSIssue(ERROR, key, f"invalid JSON: {message}; nothing was saved", line, column)


def _not_mirrored(cluster: Cluster) -> QoSIssue:
    return QoSIssue(
        ERROR,
        "data",
        f"no koordinator-system/slo-controller-config ConfigMap is mirrored for cluster "
        f"{cluster.name}; sync or import it first",
    )


# ---- reads -----------------------------------------------------------------------------


def observed_qos_data(config: QoSConfig) -> dict[str, str]:
    """The mirrored ConfigMap's data: other keys verbatim, resource-qos-config rebuilt.

    An empty cluster strategy and no node strategy is what the parser makes of a
    ConfigMap without the key; it is rebuilt as no key (Koordinator reads the two alike).
    """
    data = dict(config.data)
    rendered = render_resource_qos(config)
    if rendered != EMPTY_CONFIG:
        data[RESOURCE_QOS_KEY] = dump_json(canonical_order(rendered))
    return data


def pending_qos_draft(cluster: Cluster) -> QoSDraft | None:
    return QoSDraft.objects.filter(cluster=cluster).select_related("updated_by").first()


def _draft(cluster: Cluster) -> QoSDraft:
    draft = pending_qos_draft(cluster)
    if draft is None:
        raise QoSDraft.DoesNotExist(f"cluster {cluster.name} has no QoS draft")
    return draft


def qos_draft_data(*, cluster: Cluster) -> dict[str, str]:
    """The exact ConfigMap `data` an apply writes. Raises QoSDraft.DoesNotExist without a draft."""
    return dict(_draft(cluster).data)


def qos_draft_issues(*, cluster: Cluster) -> list[QoSIssue]:
    """Everything wrong with the draft; an apply is allowed only without an "error"."""
    draft = _draft(cluster)
    config = QoSConfig.objects.filter(cluster=cluster).first()
    return _issues(draft, config, qos_node_caches(cluster))


def qos_draft_diff(*, cluster: Cluster) -> str:
    """Unified diff, per data key, from the mirrored ConfigMap to the draft ("" if equal)."""
    draft = _draft(cluster)
    config = QoSConfig.objects.filter(cluster=cluster).first()
    observed = observed_qos_data(config) if config else {}
    return data_diff(observed, draft.data, before_label="observed", after_label="draft")


def _issues(
    draft: QoSDraft, config: QoSConfig | None, nodes: Sequence[NodeCache]
) -> list[QoSIssue]:
    issues = validate_qos_data(draft.data, nodes)
    if config is None:
        issues.insert(0, _not_mirrored(draft.cluster))
    elif draft.base_resource_version and config.resource_version != draft.base_resource_version:
        issues.append(
            QoSIssue(
                WARNING,
                "metadata.resourceVersion",
                f"the ConfigMap changed in the cluster since this draft started (resourceVersion "
                f"{draft.base_resource_version} → {config.resource_version}): an apply will stop "
                "as a conflict. Compare with the diff, then start over from the cluster",
            )
        )
    return issues


@dataclass(frozen=True)
class QoSEditor:
    """All the editor page shows for one cluster, computed with one query for the nodes."""

    cluster: Cluster
    config: QoSConfig | None
    draft: QoSDraft | None
    observed: dict[str, str]
    data: dict[str, str]  # the draft's, else the observed (shown read-only)
    resource_qos: Any  # data[resource-qos-config] parsed; None when it is not valid JSON
    issues: list[QoSIssue]
    diff: str
    preview: list[SchemataPreview]
    preview_note: str  # why the preview is missing or partial

    @property
    def errors(self) -> list[QoSIssue]:
        return [i for i in self.issues if i.is_error]

    @property
    def warnings(self) -> list[QoSIssue]:
        return [i for i in self.issues if not i.is_error]

    @property
    def can_apply(self) -> bool:
        return self.draft is not None and not self.errors and bool(self.diff)


def qos_editor(*, cluster: Cluster) -> QoSEditor:
    config = QoSConfig.objects.filter(cluster=cluster).first()
    draft = pending_qos_draft(cluster)
    observed = observed_qos_data(config) if config else {}
    data = dict(draft.data) if draft else observed
    nodes = qos_node_caches(cluster)
    parsed, problem = parse_json(data.get(RESOURCE_QOS_KEY, dump_json(EMPTY_CONFIG)))
    preview, note = _preview(observed if config else None, parsed, problem, nodes)
    return QoSEditor(
        cluster=cluster,
        config=config,
        draft=draft,
        observed=observed,
        data=data,
        resource_qos=parsed,
        issues=_issues(draft, config, nodes) if draft else validate_qos_data(data, nodes),
        diff=data_diff(observed, data, before_label="observed", after_label="draft")
        if draft
        else "",
        preview=preview,
        preview_note=note,
    )


def _preview(
    observed: Mapping[str, str] | None,
    parsed: Any,
    problem: JSONProblem | None,
    nodes: Sequence[NodeCache],
) -> tuple[list[SchemataPreview], str]:
    if problem is not None:
        where = f"line {problem.line}, column {problem.column}"
        return [], f"resource-qos-config is not valid JSON ({where}), so there is no preview."
    current = None
    if observed is not None:
        current, _problem = parse_json(observed.get(RESOURCE_QOS_KEY, dump_json(EMPTY_CONFIG)))
    note = (
        "" if observed is not None else "No ConfigMap is mirrored: the current lines are unknown."
    )
    return schemata_preview(current, parsed, nodes), note
