"""Validation of a desired node policy against the node as observed (pure).

Values are checked per system, against what each one's code recognises
(Koordinator apis/extension/numa_aware.go and node_reservation.go; Crane's
`topology.crane.io/topology-awareness` node label, read with Go's ParseBool by
crane-agent when it builds the node's NRT). A value no system would read is an
error; a value that is valid but changes nothing on this node (a Koordinator label
on a node without koordlet, Crane awareness on a non-Crane node) is a warning.

The node CPU reservation must name CPUs the node has (error), may not reserve more
CPUs than it has (error), and should not cut through CPUs running pods hold
exclusively (warning naming the pods and CPUs). An apply is allowed only when no
issue is an error.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from enum import StrEnum

from scheduler_api.engine import Flavour, NUMAAllocateStrategy, NUMATopologyPolicy
from topology.editing.node_policies.diff import (
    CPU_BIND_POLICY,
    CRANE_TOPOLOGY_AWARENESS,
    FIELD_KEYS,
    NUMA_ALLOCATE_STRATEGY,
    NUMA_TOPOLOGY_POLICY,
    RESERVATION,
    DesiredPolicy,
    FieldDiff,
    policy_field_diffs,
)
from topology.editing.node_policies.reservation_annotation import (
    APPLY_POLICIES,
    CPURow,
    desired_body,
    observed_body,
    reserved_count,
    reserved_cpu_ids,
)
from topology.parsers.cpulist import format_cpulist, parse_cpulist
from topology.parsers.errors import FieldError

KOORD_NUMA_POLICIES = tuple(p.value for p in NUMATopologyPolicy)
NUMA_ALLOCATE_STRATEGIES = tuple(s.value for s in NUMAAllocateStrategy)
# Koordinator's NodeCPUBindPolicy constants (numa_aware.go).
NODE_CPU_BIND_POLICIES = ("None", "FullPCPUsOnly", "SpreadByPCPUs")

RESERVATION_CPUS = "reservation_cpus"
RESERVATION_CPU_COUNT = "reservation_cpu_count"
RESERVATION_APPLY_POLICY = "reservation_apply_policy"
KOORDINATOR_FIELDS = (NUMA_TOPOLOGY_POLICY, NUMA_ALLOCATE_STRATEGY, CPU_BIND_POLICY)

__all__ = [
    "DesiredPolicy",
    "FieldDiff",
    "HeldCPUs",
    "IssueSeverity",
    "ObservedNode",
    "PolicyIssue",
    "has_errors",
    "policy_field_diffs",
    "validate_node_policy",
]


class IssueSeverity(StrEnum):
    ERROR = "error"
    WARNING = "warning"


@dataclass(frozen=True)
class PolicyIssue:
    """One finding about a desired policy; `field` is the NodePolicy field at fault."""

    severity: str
    field: str
    message: str
    pods: tuple[str, ...] = ()

    @property
    def is_error(self) -> bool:
        return self.severity == IssueSeverity.ERROR


def _error(field_name: str, message: str, pods: tuple[str, ...] = ()) -> PolicyIssue:
    return PolicyIssue(IssueSeverity.ERROR, field_name, message, pods)


def _warning(field_name: str, message: str, pods: tuple[str, ...] = ()) -> PolicyIssue:
    return PolicyIssue(IssueSeverity.WARNING, field_name, message, pods)


def has_errors(issues: Iterable[PolicyIssue]) -> bool:
    return any(issue.is_error for issue in issues)


@dataclass(frozen=True)
class HeldCPUs:
    """CPUs a running pod holds exclusively (its cpuset, from any publishing system)."""

    pod: str
    cpus: frozenset[int]


@dataclass(frozen=True)
class ObservedNode:
    """What validation needs to know about the node as mirrored.

    `cpu_rows` is the published CPU layout (koordlet's cpu-topology), empty when
    unknown; `capacity_cpus` the node's logical CPUs from its capacity.
    `nrt_numa_policy` is Koordinator's reading of the NRT's topologyPolicies.
    """

    name: str
    flavour: str | None = None
    labels: Mapping[str, str] = field(default_factory=dict)
    annotations: Mapping[str, str] = field(default_factory=dict)
    cpu_rows: tuple[CPURow, ...] = ()
    capacity_cpus: int | None = None
    held: tuple[HeldCPUs, ...] = ()
    kubelet_full_pcpus_only: bool = False
    nrt_numa_policy: str = ""

    @property
    def cpu_ids(self) -> frozenset[int] | None:
        """The node's CPU ids: as published, else 0..N-1 from its capacity, else None."""
        if self.cpu_rows:
            return frozenset(row[0] for row in self.cpu_rows)
        if self.capacity_cpus:
            return frozenset(range(self.capacity_cpus))
        return None

    @property
    def cpu_count(self) -> int | None:
        return len(self.cpu_rows) or self.capacity_cpus or None


def validate_node_policy(desired: DesiredPolicy, node: ObservedNode) -> list[PolicyIssue]:
    """Every error and warning of `desired` on `node`; empty when it is fine."""
    return [
        *_value_issues(desired),
        *_system_issues(desired, node),
        *_numa_policy_issues(desired, node),
        *_bind_policy_issues(desired, node),
        *_reservation_issues(desired, node),
    ]


def _choice_error(field_name: str, value: str, allowed: Iterable[str], reader: str) -> PolicyIssue:
    shown = ", ".join(repr(v) if v else '"" (None)' for v in allowed)
    key = FIELD_KEYS.get(field_name, ("", field_name))[1]
    return _error(field_name, f"{value!r} is not a value {reader} recognises for {key}: {shown}.")


def _value_issues(desired: DesiredPolicy) -> list[PolicyIssue]:
    issues = []
    checks = (
        (NUMA_TOPOLOGY_POLICY, desired.numa_topology_policy, KOORD_NUMA_POLICIES),
        (NUMA_ALLOCATE_STRATEGY, desired.numa_allocate_strategy, NUMA_ALLOCATE_STRATEGIES),
        (CPU_BIND_POLICY, desired.cpu_bind_policy, NODE_CPU_BIND_POLICIES),
    )
    for field_name, value, allowed in checks:
        if value is not None and value not in allowed:
            issues.append(_choice_error(field_name, value, allowed, "Koordinator"))
    apply_policy = desired.reservation_apply_policy
    if apply_policy and apply_policy not in APPLY_POLICIES:
        issues.append(
            _choice_error(RESERVATION_APPLY_POLICY, apply_policy, APPLY_POLICIES, "koordlet")
        )
    if desired.numa_allocate_strategy == NUMAAllocateStrategy.DISTRIBUTE_EVENLY:
        issues.append(
            _warning(
                NUMA_ALLOCATE_STRATEGY,
                "DistributeEvenly is a Koordinator NUMAAllocateStrategy, but its node-level "
                "constants name only MostAllocated and LeastAllocated; koord-scheduler's CPU "
                "picker orders NUMA nodes as for LeastAllocated for any value but MostAllocated.",
            )
        )
    return issues


def _flavour_text(flavour: str | None) -> str:
    if flavour is None:
        return "no NodeResourceTopology mirrored"
    return f"a {flavour} NodeResourceTopology"


def _system_issues(desired: DesiredPolicy, node: ObservedNode) -> list[PolicyIssue]:
    """Values that are valid but that no scheduler of this node would read."""
    issues = []
    if node.flavour != Flavour.KOORDINATOR:
        where = _flavour_text(node.flavour)
        set_fields = [f for f in KOORDINATOR_FIELDS if getattr(desired, f) is not None]
        if desired.reservation.managed:
            set_fields.append(_reservation_field(desired))
        for field_name in set_fields:
            key = FIELD_KEYS.get(field_name, FIELD_KEYS[RESERVATION])[1]
            issues.append(
                _warning(
                    field_name,
                    f"Only Koordinator (koordlet and koord-scheduler) reads {key}; this node "
                    f"has {where}, so the change does nothing until koordlet runs on it.",
                )
            )
    if desired.crane_topology_awareness is not None and node.flavour != Flavour.CRANE:
        issues.append(
            _warning(
                CRANE_TOPOLOGY_AWARENESS,
                "Only crane-agent reads topology.crane.io/topology-awareness (to set its NRT's "
                f"topologyManagerPolicy); this node has {_flavour_text(node.flavour)}, so the "
                "label is meaningful only on Crane-flavoured nodes.",
            )
        )
    return issues


def _reservation_field(desired: DesiredPolicy) -> str:
    """The form field a reservation finding belongs to: the one the policy sets."""
    if desired.reservation_cpus:
        return RESERVATION_CPUS
    if desired.reservation_cpu_count is not None:
        return RESERVATION_CPU_COUNT
    return RESERVATION_APPLY_POLICY


def _numa_policy_issues(desired: DesiredPolicy, node: ObservedNode) -> list[PolicyIssue]:
    if desired.numa_topology_policy != "" or not node.nrt_numa_policy:
        return []
    return [
        _warning(
            NUMA_TOPOLOGY_POLICY,
            "Koordinator's None is an empty label, which koord-scheduler reads as no label: it "
            f"then follows the NRT's policy ({node.nrt_numa_policy} on this node), not None. "
            "Topolens removes the label.",
        )
    ]


def _bind_policy_issues(desired: DesiredPolicy, node: ObservedNode) -> list[PolicyIssue]:
    wanted = desired.cpu_bind_policy
    if wanted in (None, "FullPCPUsOnly") or not node.kubelet_full_pcpus_only:
        return []
    return [
        _warning(
            CPU_BIND_POLICY,
            f"{wanted} has no effect here: kubelet runs the static CPU manager with "
            "full-pcpus-only, so koord-scheduler binds full physical cores "
            "(GetNodeCPUBindPolicy returns FullPCPUsOnly whatever the label says).",
        )
    ]


def _reservation_issues(desired: DesiredPolicy, node: ObservedNode) -> list[PolicyIssue]:
    request = desired.reservation
    if request.cpus and request.count is not None:
        return [
            _error(
                RESERVATION_CPU_COUNT,
                "Give reserved CPUs either as a list or as a count, not both.",
            )
        ]
    if request.removes:
        return _removal_issues(desired)
    if request.cpus:
        return _cpulist_issues(request.cpus, node)
    if request.count is not None:
        return _count_issues(request.count, desired, node)
    if request.apply_policy and not reserved_count(observed_body(node.annotations)):
        return [
            _error(
                RESERVATION_APPLY_POLICY,
                "applyPolicy needs a reservation: this node reserves no CPUs, so give a count "
                "or a cpulist too.",
            )
        ]
    return []


def _removal_issues(desired: DesiredPolicy) -> list[PolicyIssue]:
    if not desired.reservation_apply_policy:
        return []
    return [
        _error(
            RESERVATION_APPLY_POLICY,
            "A count of 0 removes the reservation annotation; an applyPolicy has nothing to "
            "apply to.",
        )
    ]


def _missing_cpus_text(missing: frozenset[int], node: ObservedNode) -> str:
    ids = node.cpu_ids or frozenset()
    if node.cpu_rows:
        has = f"which has CPUs {format_cpulist(ids)}"
    else:
        has = (
            f"which has {len(ids)} CPUs (ids {format_cpulist(ids)} assumed: it publishes no "
            "CPU layout)"
        )
    what = f"CPUs {format_cpulist(missing)} are" if len(missing) > 1 else f"CPU {min(missing)} is"
    return f"{what} not on node {node.name}, {has}."


def _cpulist_issues(text: str, node: ObservedNode) -> list[PolicyIssue]:
    try:
        cpus = parse_cpulist(text)
    except FieldError as error:
        return [_error(RESERVATION_CPUS, str(error))]
    if not cpus:
        return []
    ids = node.cpu_ids
    if ids is None:
        return [
            _warning(
                RESERVATION_CPUS,
                f"Node {node.name} publishes neither its CPU layout nor its CPU capacity, so "
                "the reserved CPUs cannot be checked against it.",
            )
        ]
    missing = cpus - ids
    if missing:
        return [_error(RESERVATION_CPUS, _missing_cpus_text(frozenset(missing), node))]
    return _cut_through(cpus, node, RESERVATION_CPUS, "") + _all_cpus(cpus, ids)


def _count_issues(count: int, desired: DesiredPolicy, node: ObservedNode) -> list[PolicyIssue]:
    total = node.cpu_count
    if count < 0:
        return [_error(RESERVATION_CPU_COUNT, "The count of CPUs to reserve cannot be negative.")]
    if total is not None and count > total:
        return [
            _error(
                RESERVATION_CPU_COUNT,
                f"Cannot reserve {count} CPUs: node {node.name} has only {total}.",
            )
        ]
    body = desired_body(desired.reservation, observed_body(node.annotations))
    cpus = reserved_cpu_ids(body, node.cpu_rows)
    if cpus is None:
        return []
    picked = f"koordlet would pick CPUs {format_cpulist(cpus)} (kubelet's takeByTopology); "
    found = _cut_through(cpus, node, RESERVATION_CPU_COUNT, picked)
    return found + _all_cpus(cpus, node.cpu_ids or frozenset(), RESERVATION_CPU_COUNT)


def _cut_through(
    cpus: frozenset[int], node: ObservedNode, field_name: str, prefix: str
) -> list[PolicyIssue]:
    """A warning naming every running pod whose exclusive CPUs the reservation takes."""
    hits = [(held.pod, held.cpus & cpus) for held in node.held if held.cpus & cpus]
    if not hits:
        return []
    named = "; ".join(f"{pod} holds {format_cpulist(shared)}" for pod, shared in hits)
    subject = f"{prefix}the reservation" if prefix else "The reservation"
    return [
        _warning(
            field_name,
            f"{subject} cuts through CPUs held exclusively by running pods: {named}. Those "
            "pods keep their CPUs until they end, so meanwhile the node does not get the "
            "reservation it is asked for.",
            pods=tuple(pod for pod, _ in hits),
        )
    ]


def _all_cpus(
    cpus: frozenset[int], ids: frozenset[int], field_name: str = RESERVATION_CPUS
) -> list[PolicyIssue]:
    if not ids or not ids <= cpus:
        return []
    return [_warning(field_name, "This reserves every CPU of the node: no pod can get one.")]
