"""Desired node policies: validate against the mirror, save one, bulk-edit by label selector.

The rules are pure (`topology.editing.node_policies.validation`); this module reads what they
need from the mirror: the node's NRT flavour and CPU layout, and the CPUs running
pods hold exclusively. Saving refuses a policy with an error (nothing is written)
and keeps one with warnings, which the caller shows. An apply to the cluster is
allowed only when `node_policy_issues` has no error.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from django.core.exceptions import ObjectDoesNotExist, ValidationError
from django.db import transaction

from scheduler_api.engine import nrt_numa_policy
from topology.choices import Flavour
from topology.domain.pod_phases import FINISHED_PHASES
from topology.editing.node_policies.label_selectors import (
    SelectorError,
    parse_selector,
    selector_matches,
)
from topology.editing.node_policies.patch import node_merge_patch, node_policy_diff
from topology.editing.node_policies.validation import (
    DesiredPolicy,
    FieldDiff,
    HeldCPUs,
    ObservedNode,
    PolicyIssue,
    has_errors,
    validate_node_policy,
)
from topology.models import Cluster, Node, NodePolicy, NodeTopology, PodAllocation
from topology.services.mirror.cpu_state import pod_claims

POLICY_FIELDS = NodePolicy.FIELDS
NON_FIELD = "__all__"

__all__ = [
    "POLICY_FIELDS",
    "BulkEditError",
    "BulkEditResult",
    "FieldDiff",
    "NodePolicyError",
    "PolicyIssue",
    "SelectorError",
    "draft_policies_for_selector",
    "node_merge_patch",
    "node_policies_bulk_edit",
    "node_policy_diff",
    "node_policy_issues",
    "node_policy_review",
    "node_policy_save",
    "nodes_matching",
    "observed_node",
    "policy_has_errors",
]


class NodePolicyError(ValueError):
    """A policy that is not saved; `field_errors` maps policy fields to messages."""

    def __init__(self, field_errors: Mapping[str, list[str]]) -> None:
        self.field_errors = {k: list(v) for k, v in field_errors.items()}
        super().__init__("; ".join(f"{k}: {' '.join(v)}" for k, v in self.field_errors.items()))


def _stored_policy(node: Node) -> NodePolicy | None:
    """The node's saved policy; no query when the node came with `desired_policy` joined."""
    try:
        return node.desired_policy
    except ObjectDoesNotExist:
        return None


def _topology(node: Node) -> NodeTopology | None:
    try:
        return node.topology
    except ObjectDoesNotExist:
        return None


def _held_cpus(node: Node) -> tuple[HeldCPUs, ...]:
    """Running pods' exclusive cpusets, whatever system published them."""
    if node.pk is None:
        return ()
    allocations = (
        PodAllocation.objects.filter(node=node)
        .exclude(cpuset="")
        .exclude(pod__phase__in=FINISHED_PHASES)
        .select_related("pod")
    )
    return tuple(HeldCPUs(claim.holder.name, claim.cpus) for claim in pod_claims(allocations))


def observed_node(node: Node) -> ObservedNode:
    """What validation needs to know about `node` (one query beyond the node and its NRT)."""
    topology = _topology(node)
    flavour = topology.flavour if topology else None
    options = (topology.cpu_manager_options or {}) if topology else {}
    capacity = (node.capacity or {}).get("cpu")
    return ObservedNode(
        name=node.name,
        flavour=flavour,
        labels=node.labels or {},
        annotations=node.annotations or {},
        cpu_rows=topology.cpus if topology else (),
        capacity_cpus=capacity // 1000 if isinstance(capacity, int) and capacity > 0 else None,
        held=_held_cpus(node),
        kubelet_full_pcpus_only=bool(
            topology
            and topology.cpu_manager_policy == "static"
            and str(options.get("full-pcpus-only", "")).lower() == "true"
        ),
        nrt_numa_policy=(
            nrt_numa_policy(topology.topology_policies or [])
            if topology and flavour == Flavour.KOORDINATOR
            else ""
        ),
    )


def node_policy_issues(policy: NodePolicy) -> list[PolicyIssue]:
    """Errors and warnings of the policy on its node as mirrored now (saved or not)."""
    return validate_node_policy(DesiredPolicy.of(policy), observed_node(policy.node))


def policy_has_errors(issues: Iterable[PolicyIssue]) -> bool:
    return has_errors(issues)


def node_policy_review(policy: NodePolicy) -> dict[str, Any]:
    """Everything an operator checks before an apply: diff, exact patch, issues."""
    issues = node_policy_issues(policy)
    return {
        "node": policy.node.name,
        "diff": [
            {**dataclasses.asdict(diff), "changed": diff.changed}
            for diff in node_policy_diff(policy)
        ],
        "patch": node_merge_patch(policy),
        "issues": [dataclasses.asdict(issue) for issue in issues],
        "apply_allowed": not has_errors(issues),
    }


def _errors_by_field(issues: Iterable[PolicyIssue]) -> dict[str, list[str]]:
    errors: dict[str, list[str]] = {}
    for issue in issues:
        if issue.is_error:
            errors.setdefault(issue.field or NON_FIELD, []).append(issue.message)
    return errors


def _set_fields(policy: NodePolicy, values: Mapping[str, Any], *, replace: bool) -> None:
    unknown = set(values) - set(POLICY_FIELDS)
    if unknown:
        raise NodePolicyError({name: ["not a node policy field"] for name in sorted(unknown)})
    for name in POLICY_FIELDS:
        if name in values:
            setattr(policy, name, values[name])
        elif replace:
            setattr(policy, name, NodePolicy._meta.get_field(name).get_default())
    policy.reservation_cpus = policy.reservation_cpus or ""
    policy.reservation_apply_policy = policy.reservation_apply_policy or ""


def _checked(policy: NodePolicy) -> list[PolicyIssue]:
    """Model checks (choices, types) then the policy rules; NodePolicyError on an error."""
    try:
        policy.full_clean(exclude=["node"])
    except ValidationError as error:
        raise NodePolicyError(error.message_dict) from error
    issues = node_policy_issues(policy)
    if has_errors(issues):
        raise NodePolicyError(_errors_by_field(issues))
    return issues


def draft_policy(node: Node, values: Mapping[str, Any], *, replace: bool = False) -> NodePolicy:
    """The node's policy with `values` set, not saved (for a preview or a check)."""
    policy = _stored_policy(node) or NodePolicy(node=node)
    policy.node = node
    _set_fields(policy, values, replace=replace)
    return policy


@transaction.atomic
def node_policy_save(
    *, node: Node, values: Mapping[str, Any], replace: bool = False
) -> tuple[NodePolicy, list[PolicyIssue]]:
    """Create or update the node's desired policy; its warnings come back with it.

    `values` holds the fields to set (a missing one keeps its value, or with
    `replace` goes back to "leave as observed"). An error raises NodePolicyError
    and writes nothing.
    """
    policy = draft_policy(node, values, replace=replace)
    issues = _checked(policy)
    policy.save()
    return policy, issues


def nodes_matching(*, cluster: Cluster, selector: str) -> list[Node]:
    """The cluster's nodes whose labels the selector matches, by name (SelectorError if bad)."""
    parsed = parse_selector(selector)
    nodes = Node.objects.filter(cluster=cluster).select_related("topology", "desired_policy")
    nodes = nodes.order_by("name")
    return [node for node in nodes if selector_matches(parsed, node.labels or {})]


def draft_policies_for_selector(
    *, cluster: Cluster, selector: str, values: Mapping[str, Any]
) -> list[NodePolicy]:
    """What a bulk edit would save, unsaved: one policy per matching node."""
    return [
        draft_policy(node, values) for node in nodes_matching(cluster=cluster, selector=selector)
    ]


@dataclass
class BulkEditResult:
    created: list[str] = field(default_factory=list)
    updated: list[str] = field(default_factory=list)
    warnings: dict[str, list[PolicyIssue]] = field(default_factory=dict)

    @property
    def nodes(self) -> list[str]:
        return sorted(self.created + self.updated)


class BulkEditError(ValueError):
    """No policy was saved: `node_errors` maps node names to their field errors."""

    def __init__(self, node_errors: Mapping[str, Mapping[str, Sequence[str]]]) -> None:
        self.node_errors = {n: {k: list(v) for k, v in e.items()} for n, e in node_errors.items()}
        names = ", ".join(sorted(self.node_errors))
        super().__init__(f"no policy was saved; errors on {names}")


@transaction.atomic
def node_policies_bulk_edit(
    *, cluster: Cluster, selector: str, values: Mapping[str, Any]
) -> BulkEditResult:
    """Set `values` on the policy of every node the selector matches, all or nothing.

    An empty selector is refused: a bulk edit of every node must say so
    (e.g. `kubernetes.io/os=linux`).
    """
    if not selector.strip():
        raise SelectorError("give a label selector; an empty one would select every node")
    if not values:
        raise NodePolicyError({NON_FIELD: ["choose at least one field to set"]})
    result, failures = BulkEditResult(), {}
    for node in nodes_matching(cluster=cluster, selector=selector):
        existed = _stored_policy(node) is not None
        try:
            _policy, issues = node_policy_save(node=node, values=values)
        except NodePolicyError as error:
            failures[node.name] = error.field_errors
            continue
        (result.updated if existed else result.created).append(node.name)
        if issues:
            result.warnings[node.name] = issues
    if failures:
        raise BulkEditError(failures)
    return result
