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
