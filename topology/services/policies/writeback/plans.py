"""What an apply would write, before anything is written: the exact body, the diff, and
why it must not go ahead (refusals) or what to keep in mind (warnings).

The confirm page, the API and the request services all build the same plan, so the
body an admin confirms is the body the task sends.
"""

from __future__ import annotations

import copy
import hashlib
import json
from dataclasses import dataclass
from typing import Any

from topology.choices import WriteKind
from topology.editing.node_policies.patch import node_merge_patch
from topology.models import Cluster, ClusterConnection, NodePolicy, QoSDraft
from topology.services.policies.node_policies import node_policy_issues
from topology.services.policies.qos_draft import qos_draft_data, qos_draft_diff, qos_draft_issues
from topology.services.policies.writeback.diffs import flat_lines, merge_patch, unified_diff
from topology.sync.resources import QOS_CONFIGMAP, QOS_NAMESPACE

ERROR = "error"


@dataclass(frozen=True)
class Finding:
    """One reason an apply is refused (or a warning): where, and what."""

    path: str
    message: str

    def __str__(self) -> str:
        return f"{self.path}: {self.message}" if self.path else self.message


@dataclass(frozen=True)
class ApplyPlan:
    cluster: Cluster
    kind: WriteKind
    object_name: str
    body: dict[str, Any]
    diff: str
    resource_version_before: str
    refusals: tuple[Finding, ...] = ()
    warnings: tuple[Finding, ...] = ()
    note: str = ""

    @property
    def allowed(self) -> bool:
        return not self.refusals

    @property
    def digest(self) -> str:
        """Fingerprint of the body: a confirm form carries it, so that what is applied is
        what was shown (a changed mirror or draft meanwhile asks for a new look)."""
        text = json.dumps(self.body, sort_keys=True, separators=(",", ":"))
        return hashlib.sha256(text.encode()).hexdigest()

    @property
    def body_json(self) -> str:
        return json.dumps(self.body, indent=2, sort_keys=True, ensure_ascii=False)

    def refusal_message(self) -> str:
        lines = ["Refused; nothing was written."] + [f"- {finding}" for finding in self.refusals]
        return "\n".join(lines)


def connection_refusals(cluster: Cluster) -> list[Finding]:
    if ClusterConnection.objects.filter(cluster=cluster).exists():
        return []
    message = f"cluster {cluster.name} has no connection (add one in admin); nothing can be written"
    return [Finding("cluster", message)]


def issue_findings(issues: Any, path_attribute: str) -> tuple[list[Finding], list[Finding]]:
    """Validation issues (severity, path or field, message) → (errors, warnings)."""
    errors, warnings = [], []
    for issue in issues:
        finding = Finding(str(getattr(issue, path_attribute, "") or ""), str(issue.message))
        (errors if str(issue.severity) == ERROR else warnings).append(finding)
    return errors, warnings


# Node policy ----------------------------------------------------------------------------


def plan_node_policy_apply(policy: NodePolicy) -> ApplyPlan:
    """A merge patch of the node's labels and annotations, guarded by the node's mirrored
    resourceVersion: the API server answers 409 if the node changed since.

    The client sends it as a strategic merge patch (the kubernetes client's choice for a
    dict body); on the metadata maps it merges exactly as a JSON merge patch does, `None`
    deleting a key, so the body is the same either way."""
    node = policy.node
    patch = copy.deepcopy(node_merge_patch(policy))
    changes = patch.get("metadata") or {}
    body = merge_patch(patch, {"metadata": {"resourceVersion": node.resource_version}})
    errors, warnings = issue_findings(node_policy_issues(policy), "field")
    if not (changes.get("labels") or changes.get("annotations")):
        errors.append(Finding("", "nothing to change: the node already has the desired policy"))
    if not node.resource_version:
        message = "the node's resourceVersion is unknown, so the write cannot be guarded; sync"
        errors.append(Finding("node", f"{message} the cluster first"))
    return ApplyPlan(
        cluster=node.cluster,
        kind=WriteKind.NODE_POLICY,
        object_name=node.name,
        body=body,
        diff=node_metadata_diff(node.name, node.labels, node.annotations, changes),
        resource_version_before=node.resource_version,
        refusals=tuple(errors + connection_refusals(node.cluster)),
        warnings=tuple(warnings),
    )


def node_metadata_diff(
    name: str, labels: dict[str, str], annotations: dict[str, str], changes: dict[str, Any]
) -> str:
    before = {"labels": labels, "annotations": annotations}
    after = merge_patch(before, {k: changes[k] for k in ("labels", "annotations") if k in changes})
    return unified_diff(_metadata_lines(before), _metadata_lines(after), name=f"node {name}")


def _metadata_lines(metadata: dict[str, Any]) -> list[str]:
    return flat_lines("metadata.labels", metadata.get("labels") or {}) + flat_lines(
        "metadata.annotations", metadata.get("annotations") or {}
    )


# QoS config -------------------------------------------------------------------------------


def plan_qos_apply(cluster: Cluster) -> ApplyPlan:
    """The draft's ConfigMap `data`, to PUT over the ConfigMap at the draft's base version.

    At apply time the task reads the ConfigMap first: if its resourceVersion is not the
    base, nothing is written. The PUT keeps the ConfigMap's other metadata (labels,
    annotations) and binaryData as the cluster has them; only `data` is replaced.
    """
    draft = QoSDraft.objects.filter(cluster=cluster).first()
    object_name = f"{QOS_NAMESPACE}/{QOS_CONFIGMAP}"
    if draft is None:
        return ApplyPlan(
            cluster, WriteKind.QOS_CONFIG, object_name, {}, "", "",
            refusals=(Finding("", "there is no QoS draft to apply; edit the QoS config first"),),
        )  # fmt: skip
    metadata = {"namespace": QOS_NAMESPACE, "name": QOS_CONFIGMAP}
    metadata["resourceVersion"] = draft.base_resource_version
    body = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": metadata}
    body["data"] = dict(qos_draft_data(cluster=cluster))
    diff = qos_draft_diff(cluster=cluster)
    errors, warnings = issue_findings(qos_draft_issues(cluster=cluster), "path")
    if not diff.strip():
        errors.append(Finding("", "nothing to change: the draft equals the cluster's ConfigMap"))
    if not draft.base_resource_version:
        message = "the draft has no base resourceVersion (no ConfigMap was mirrored when it began)"
        errors.append(Finding("base_resource_version", f"{message}; Topolens only updates it"))
    return ApplyPlan(
        cluster=cluster,
        kind=WriteKind.QOS_CONFIG,
        object_name=object_name,
        body=body,
        diff=diff,
        resource_version_before=draft.base_resource_version,
        refusals=tuple(errors + connection_refusals(cluster)),
        warnings=tuple(warnings),
        note="Only data is replaced: the ConfigMap's labels, annotations and binaryData are "
        "sent back as the cluster has them at apply time.",
    )
