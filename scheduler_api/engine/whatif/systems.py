"""Which scheduler judges a node, with which settings, and the filters every one shares.

A what-if runs the node through what the real scheduler would: NodeUnschedulable,
NodeResourcesFit, then the topology plugin of the chosen system (scheduler-plugins
NodeResourceTopologyMatch, crane-scheduler or koord-scheduler NodeNUMAResource).
Taints, affinity and the other default plugins are not modelled.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from enum import StrEnum
from types import MappingProxyType

from scheduler_api.engine.crane.reference.plugin import CraneConfig
from scheduler_api.engine.koordinator.reference.state import KoordConfig
from scheduler_api.engine.model.results import (
    PlacementResult,
)
from scheduler_api.engine.model.snapshot import Flavour, NodeSnapshot, PodSpec
from scheduler_api.engine.schedulerplugins.reference.match import NRTMatchConfig, ScoringStrategy


class Scheduler(StrEnum):
    """`auto` picks, per node, the system its NRT flavour says manages it.

    `default` is kube-scheduler without a topology plugin: only the node-level filters
    judge, and the kubelet decides NUMA alignment at admission."""

    AUTO = "auto"
    SCHEDULER_PLUGINS = "scheduler-plugins"
    CRANE = "crane"
    KOORDINATOR = "koordinator"
    DEFAULT = "default"


SYSTEMS = (Scheduler.SCHEDULER_PLUGINS, Scheduler.CRANE, Scheduler.KOORDINATOR, Scheduler.DEFAULT)
KOORD_SCORING = frozenset({"LeastAllocated", "MostAllocated"})

SYSTEM_OF_FLAVOUR: Mapping[Flavour | None, Scheduler] = MappingProxyType(
    {
        None: Scheduler.SCHEDULER_PLUGINS,
        Flavour.UPSTREAM_V1ALPHA1: Scheduler.SCHEDULER_PLUGINS,
        Flavour.UPSTREAM_V1ALPHA2: Scheduler.SCHEDULER_PLUGINS,
        Flavour.CRANE: Scheduler.CRANE,
        Flavour.KOORDINATOR: Scheduler.KOORDINATOR,
    }
)


def system_for(node: NodeSnapshot, scheduler: Scheduler) -> Scheduler:
    """The system that judges `node`: the one asked for, or the node's own under `auto`."""
    return SYSTEM_OF_FLAVOUR[node.flavour] if scheduler is Scheduler.AUTO else scheduler


def parse_scheduler(value: str) -> Scheduler:
    try:
        return Scheduler(value)
    except ValueError:
        choices = ", ".join(s.value for s in Scheduler)
        raise ValueError(f"unknown scheduler {value!r}; expected one of {choices}") from None


def parse_scoring(value: str | None) -> ScoringStrategy | None:
    if value is None or value == "":
        return None
    try:
        return ScoringStrategy(value)
    except ValueError:
        choices = ", ".join(s.value for s in ScoringStrategy)
        raise ValueError(f"unknown scoring strategy {value!r}; expected one of {choices}") from None


def check_weights(weights: Mapping[str, int] | None) -> Mapping[str, int] | None:
    if weights is None:
        return None
    for name, weight in weights.items():
        if not name or isinstance(weight, bool) or not isinstance(weight, int) or weight < 1:
            raise ValueError(f"weight of {name!r} must be a whole number ≥ 1; got {weight!r}")
    return MappingProxyType(dict(weights))


@dataclass(frozen=True, slots=True)
class SystemConfigs:
    """Each system's plugin arguments, derived from one what-if's scoring and weights."""

    nrt: NRTMatchConfig = field(default_factory=NRTMatchConfig)
    crane: CraneConfig = field(default_factory=CraneConfig)
    koordinator: KoordConfig = field(default_factory=KoordConfig)

    @classmethod
    def build(
        cls,
        scoring: ScoringStrategy | None,
        weights: Mapping[str, int] | None,
        *,
        base: SystemConfigs | None = None,
    ) -> SystemConfigs:
        """`base` (a scheduler profile's arguments, else the defaults) with a what-if's
        scoring and weights over it: scheduler-plugins takes any strategy; Koordinator
        only the two it knows."""
        base = base or cls()
        nrt_kwargs: dict[str, object] = {}
        koord_kwargs: dict[str, object] = {}
        if scoring is not None:
            nrt_kwargs["scoring_strategy"] = scoring
            if scoring.value in KOORD_SCORING:
                koord_kwargs["scoring_strategy"] = scoring.value
                koord_kwargs["numa_scoring_strategy"] = scoring.value
        if weights is not None:
            nrt_kwargs["resource_weights"] = weights
            koord_kwargs["resource_weights"] = weights
        return cls(
            nrt=replace(base.nrt, **nrt_kwargs),  # type: ignore[arg-type]
            crane=base.crane,
            koordinator=replace(base.koordinator, **koord_kwargs),  # type: ignore[arg-type]
        )

    def config_for(self, system: Scheduler) -> object:
        if system is Scheduler.CRANE:
            return self.crane
        if system is Scheduler.KOORDINATOR:
            return self.koordinator
        return self.nrt


@dataclass(frozen=True, slots=True)
class PodLevelSupport:
    """Whether a scheduler reads pod-level resources (spec.resources), from the
    Kubernetes libraries it is built on and its own topology plugin's code.

    `node_fit`: its NodeResourcesFit takes the pod-level requests (resourceapi
    PodRequests without SkipPodLevelResources); `topology`: its NUMA plugin does too;
    `built_on`: the Kubernetes version it is built on; `how`: the sentence an answer
    gives when the pod sets spec.resources."""

    node_fit: bool
    topology: bool
    built_on: str
    how: str


# Sources: each project's go.mod and NUMA plugin at the snapshot Topolens follows.
POD_LEVEL_SUPPORT: Mapping[Scheduler, PodLevelSupport] = MappingProxyType(
    {
        # kube-scheduler: PodLevelResources is beta and on by default from 1.34 (alpha,
        # off, in 1.32-1.33, where the API server drops spec.resources altogether: a
        # pod that carries it was admitted with the gate on).
        Scheduler.DEFAULT: PodLevelSupport(
            True,
            True,
            "the cluster's Kubernetes (assumed 1.34 or later)",
            "read as the pod's requests by NodeResourcesFit",
        ),
        # scheduler-plugins 903da7d: k8s.io/kubernetes v1.35.7, so its NodeResourcesFit
        # honours them; NodeResourceTopologyMatch sums the containers
        # (pkg/util/resource.go GetPodEffectiveRequest, and one container at a time
        # under the container scope): its NUMA fit ignores spec.resources.
        Scheduler.SCHEDULER_PLUGINS: PodLevelSupport(
            True,
            False,
            "Kubernetes 1.35",
            "read as the pod's requests by NodeResourcesFit; ignored by "
            "NodeResourceTopologyMatch, which sums the containers per NUMA zone",
        ),
        # koordinator v1.8 (a7a1b76): k8s.io/kubernetes v1.35; NodeNUMAResource's
        # PreFilter takes resourceapi.PodRequests(pod, {}) (component-helpers v0.35),
        # pod-level requests included.
        Scheduler.KOORDINATOR: PodLevelSupport(
            True,
            True,
            "Kubernetes 1.35",
            "read as the pod's requests by NodeResourcesFit and NodeNUMAResource",
        ),
        # crane-scheduler c2c0533: k8s.io/api v0.23.3, whose PodSpec has no resources
        # field: the pod decodes without it, and every plugin sums the containers.
        Scheduler.CRANE: PodLevelSupport(
            False,
            False,
            "Kubernetes 1.23",
            "ignored: its Pod type predates spec.resources, so NodeResourcesFit and "
            "its NUMA plugin sum the containers",
        ),
    }
)


def reads_pod_level_requests(system: Scheduler) -> bool:
    """Whether `system`'s NodeResourcesFit takes spec.resources.requests (AUTO: each
    node's own system decides; the default scheduler's answer stands for it)."""
    support = POD_LEVEL_SUPPORT.get(system, POD_LEVEL_SUPPORT[Scheduler.DEFAULT])
    return support.node_fit


def pod_level_note(system: Scheduler) -> str:
    """What an answer says of a pod with spec.resources judged by `system`."""
    support = POD_LEVEL_SUPPORT[system]
    where = f"{system.value}, built on {support.built_on}"
    return f"pod-level resources (spec.resources): {support.how} ({where})"


NO_TOPOLOGY_PLUGIN_NOTE = (
    "no topology plugin: kube-scheduler judges the node-level filters only; "
    "NUMA alignment is left to the kubelet"
)


def default_scheduler_verdict(
    node: NodeSnapshot, pod: PodSpec, *, config: object, reservations: object
) -> PlacementResult:
    """kube-scheduler without a topology plugin, past the shared filters: it binds.

    Its NodeResourcesFit score is not reproduced (score None)."""
    return PlacementResult(fits=True, notes=(NO_TOPOLOGY_PLUGIN_NOTE,))
