"""Koordinator PreFilter: what the pod asks for, read the way koord-scheduler reads it.

Reproduces the PreFilter of nodenumaresource/plugin.go, AllowUseCPUSet (util.go), the
reservation plugin's refusal of a malformed exact-match-reservation annotation
(koordinator v1.8.0 reservation/transformer.go),
koordinator's priority classes (apis/extension/priority.go) and the Kubernetes
resourceapi.PodRequests it relies on.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace

from scheduler_api.engine.koordinator.reference.reservation import exact_match_spec
from scheduler_api.engine.koordinator.reference.state import KoordConfig
from scheduler_api.engine.model.kubernetes import pod_requests
from scheduler_api.engine.model.results import QuantityFormat, Reason, ReasonCheck
from scheduler_api.engine.model.snapshot import (
    CPU_EXCLUSIVE_POLICIES,
    CPUBindPolicy,
    CPUExclusivePolicy,
    KoordPriorityClass,
    KoordQoSClass,
    PodSpec,
)

ERR_INVALID_CPUS = "the requested CPUs must be integer"
BIND_POLICIES = (CPUBindPolicy.FULL_PCPUS, CPUBindPolicy.SPREAD_BY_PCPUS)


def priority_class(pod: PodSpec) -> KoordPriorityClass:
    """GetPriorityClass: koordinator's ranges of spec.priority."""
    ranges = (
        (9000, 9999, KoordPriorityClass.PROD),
        (7000, 7999, KoordPriorityClass.MID),
        (5000, 5999, KoordPriorityClass.BATCH),
        (3000, 3999, KoordPriorityClass.FREE),
    )
    if pod.priority is None:
        return KoordPriorityClass.NONE
    return next(
        (c for low, high, c in ranges if low <= pod.priority <= high), KoordPriorityClass.NONE
    )


def allow_use_cpuset(pod: PodSpec) -> bool:
    """AllowUseCPUSet: LSE/LSR pods of koord-prod priority (LSE/LSR default to prod)."""
    qos = pod.koord_qos_class
    return qos in (KoordQoSClass.LSE, KoordQoSClass.LSR) and priority_class(pod) in (
        KoordPriorityClass.PROD,
        KoordPriorityClass.NONE,
    )


@dataclass(frozen=True, slots=True)
class PodState:
    """preFilterState (plus the request formats needed to render resource-status)."""

    requests: Mapping[str, int]
    formats: Mapping[str, QuantityFormat]
    num_cpus_needed: int = 0
    skip: bool = False
    error: Reason | None = None
    request_cpu_bind: bool = False
    required_cpu_bind_policy: str = ""
    preferred_cpu_bind_policy: str = ""
    preferred_cpu_exclusive_policy: str = ""
    pod_numa_policy: str = ""
    pod_numa_exclusive: str = ""
    has_reservation_affinity: bool = False
    ignores_reservations: bool = False


def prefilter(pod: PodSpec, config: KoordConfig) -> PodState:
    """PreFilter: requests, the pod's NUMA spec and, for LSE/LSR, its bind policies."""
    # resourceapi.PodRequests(pod, PodResourcesOptions{}) (component-helpers v0.35):
    # pod-level requests (spec.resources) replace the containers' sum where set
    requests, formats = pod_requests(pod, pod_level=True)
    spec, numa_spec = pod.koord_resource_spec, pod.koord_numa_topology_spec
    if spec is None or numa_spec is None:
        bad = Reason(
            ReasonCheck.INVALID_ANNOTATION,
            message="resource-spec or numa-topology-spec is not valid JSON",
        )
        return PodState(requests, formats, error=bad)
    exact = exact_match_spec(pod)
    if isinstance(exact, str):  # the reservation plugin's BeforePreFilter fails the pod
        bad_spec = Reason(ReasonCheck.INVALID_ANNOTATION, message=exact)
        return PodState(requests, formats, error=bad_spec)
    if not any(requests.values()):
        return PodState(requests, formats, skip=True)
    cpu = requests.get("cpu", 0)
    state = PodState(
        requests, formats, num_cpus_needed=cpu // 1000, pod_numa_policy=numa_spec[0],
        pod_numa_exclusive=numa_spec[1], has_reservation_affinity=pod.has_reservation_affinity,
        ignores_reservations=pod.ignores_reservations,
    )  # fmt: skip
    if not allow_use_cpuset(pod):
        return state
    preferred = spec.preferred_cpu_bind_policy
    if preferred in ("", CPUBindPolicy.DEFAULT):
        preferred = config.default_cpu_bind_policy
    required = spec.required_cpu_bind_policy
    if required == CPUBindPolicy.DEFAULT:
        required = config.default_cpu_bind_policy
    policy = required or preferred
    if policy not in BIND_POLICIES:
        return state
    if cpu % 1000 != 0:
        return replace(
            state,
            error=Reason(ReasonCheck.INVALID_CPU_REQUEST, resource="cpu", message=ERR_INVALID_CPUS),
        )
    if cpu == 0:
        return state
    return replace(
        state, request_cpu_bind=True, required_cpu_bind_policy=required,
        preferred_cpu_bind_policy=policy,
        preferred_cpu_exclusive_policy=spec.preferred_cpu_exclusive_policy,
    )  # fmt: skip


def koord_exclusive_policy(pod: PodSpec) -> CPUExclusivePolicy:
    """The exclusive policy Koordinator's books keep for the pod (its preferred one)."""
    spec = pod.koord_resource_spec
    policy = spec.preferred_cpu_exclusive_policy if spec else ""
    exclusive = CPUExclusivePolicy(policy) if policy in CPU_EXCLUSIVE_POLICIES else None
    return exclusive or CPUExclusivePolicy.UNSET
