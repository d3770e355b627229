"""Scheduler profiles: which system judges a pod, with which plugin arguments.

A cluster runs one or more schedulers, each with profiles (KubeSchedulerConfiguration
`profiles[]`); a pod's `spec.schedulerName` picks one. Topolens reads those documents
into `SchedulerProfile`s and answers a what-if with the profile that would really see
the pod. Upstream sources of each rule:

- kube-scheduler `KubeSchedulerConfiguration` (kubescheduler.config.k8s.io v1/v1beta3):
  `profiles[].schedulerName` (default "default-scheduler"), `plugins.<point>.enabled /
  disabled` (multiPoint included; "*" disables the defaults), `pluginConfig[].args`.
- scheduler-plugins `NodeResourceTopologyMatchArgs.scoringStrategy` (`type`,
  `resources[{name, weight}]`), defaults LeastAllocated, cpu and memory weight 1.
- crane-scheduler registers its topology plugin under the same name,
  `NodeResourceTopologyMatch`, with no args; its deployment enables it at `preBind`
  (it writes `topology.crane.io/topology-result` there), which scheduler-plugins' does
  not implement. That is how the two are told apart here; the stored profile's system
  can be corrected by hand where a deployment differs.
- koord-scheduler `NodeNUMAResource` with `NodeNUMAResourceArgs`
  (`defaultCPUBindPolicy`, `scoringStrategy{type, resources}`, `numaScoringStrategy`),
  defaults as `SetDefaults_NodeNUMAResourceArgs`.

A profile with none of these topology plugins is the default scheduler's kind: only the
node-level filters judge (`Scheduler.DEFAULT`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

from scheduler_api.engine.koordinator.reference.state import KoordConfig
from scheduler_api.engine.model.snapshot import (
    ANN_CRANE_AWARENESS,
    ANN_CRANE_CPU_POLICY,
    ANN_KOORD_NUMA_SPEC,
    ANN_KOORD_RESERVATION_AFFINITY,
    ANN_KOORD_RESOURCE_SPEC,
    LABEL_KOORD_QOS,
    CPUBindPolicy,
    PodSpec,
)
from scheduler_api.engine.schedulerplugins.reference.common import NRTMatchConfig, ScoringStrategy
from scheduler_api.engine.whatif.systems import Scheduler, pod_level_note

DEFAULT_SCHEDULER_NAME = "default-scheduler"
CONFIG_GROUP = "kubescheduler.config.k8s.io/"
NRT_MATCH = "NodeResourceTopologyMatch"
NODE_NUMA_RESOURCE = "NodeNUMAResource"
KOORD_STRATEGIES = frozenset({"LeastAllocated", "MostAllocated"})
KOORD_BIND_POLICIES = frozenset(p.value for p in CPUBindPolicy if p.value)


class ProfileError(ValueError):
    """A scheduler configuration document Topolens cannot read; says where."""


@dataclass(frozen=True, slots=True)
class SchedulerProfile:
    """One `schedulerName` and the system (with its arguments) that judges its pods."""

    scheduler_name: str
    system: Scheduler
    nrt: NRTMatchConfig = field(default_factory=NRTMatchConfig)
    koordinator: KoordConfig = field(default_factory=KoordConfig)
    source: str = "built-in default"

    @property
    def pod_level_resources(self) -> str:
        """Whether this profile's scheduler reads pod-level resources (spec.resources),
        from the Kubernetes it is built on and its own topology plugin
        (`systems.POD_LEVEL_SUPPORT`)."""
        return pod_level_note(self.system)

    def arguments(self) -> dict[str, Any]:
        """The plugin arguments in force, as their upstream field names spell them."""
        if self.system is Scheduler.SCHEDULER_PLUGINS:
            return {
                "scoringStrategy": {
                    "type": self.nrt.scoring_strategy.value,
                    "resources": _weights_list(self.nrt.resource_weights),
                }
            }
        if self.system is Scheduler.KOORDINATOR:
            config = self.koordinator
            return {
                "defaultCPUBindPolicy": config.default_cpu_bind_policy,
                "scoringStrategy": {
                    "type": config.scoring_strategy,
                    "resources": _weights_list(config.resource_weights),
                },
                "numaScoringStrategy": {"type": config.numa_scoring_strategy},
            }
        return {}


def _weights_list(weights: Mapping[str, int]) -> list[dict[str, Any]]:
    return [{"name": name, "weight": weight} for name, weight in sorted(weights.items())]


# The names the projects' own install manifests give their schedulers: used where a
# cluster has no scheduler configuration stored.
BUILT_IN_PROFILES: tuple[SchedulerProfile, ...] = (
    SchedulerProfile("topo-aware-scheduler", Scheduler.SCHEDULER_PLUGINS),
    SchedulerProfile("crane-scheduler", Scheduler.CRANE),
    SchedulerProfile("koord-scheduler", Scheduler.KOORDINATOR),
)


# --- reading a KubeSchedulerConfiguration ----------------------------------------------


def parse_scheduler_configuration(
    document: Any, *, source: str = "KubeSchedulerConfiguration"
) -> tuple[SchedulerProfile, ...]:
    """The profiles of one KubeSchedulerConfiguration document (a parsed YAML/JSON map).

    Raises ProfileError naming the field at fault."""
    if not isinstance(document, Mapping):
        raise ProfileError("expected a KubeSchedulerConfiguration object")
    if document.get("kind") != "KubeSchedulerConfiguration":
        kind = document.get("kind")
        raise ProfileError(f"kind: expected KubeSchedulerConfiguration, got {kind!r}")
    api_version = document.get("apiVersion")
    if not isinstance(api_version, str) or not api_version.startswith(CONFIG_GROUP):
        raise ProfileError(f"apiVersion: expected {CONFIG_GROUP}<version>, got {api_version!r}")
    profiles = document.get("profiles") or [{}]
    if not isinstance(profiles, list):
        raise ProfileError("profiles: expected a list")
    parsed = tuple(_profile(raw, f"profiles[{i}]", source) for i, raw in enumerate(profiles))
    names = [p.scheduler_name for p in parsed]
    duplicated = sorted({n for n in names if names.count(n) > 1})
    if duplicated:
        raise ProfileError(f"profiles: schedulerName repeated: {', '.join(duplicated)}")
    return parsed


def _profile(raw: Any, path: str, source: str) -> SchedulerProfile:
    if not isinstance(raw, Mapping):
        raise ProfileError(f"{path}: expected an object")
    name = raw.get("schedulerName", DEFAULT_SCHEDULER_NAME)
    if not isinstance(name, str) or not name:
        raise ProfileError(f"{path}.schedulerName: expected a non-empty string")
    enabled = _enabled_plugins(raw.get("plugins") or {}, f"{path}.plugins")
    args = _plugin_args(raw.get("pluginConfig") or [], f"{path}.pluginConfig")
    source_text = f"{source}, {path} ({name})"
    if NODE_NUMA_RESOURCE in enabled.get("*", set()):
        koord = _koordinator_args(args.get(NODE_NUMA_RESOURCE, {}), f"{path}.pluginConfig")
        return SchedulerProfile(name, Scheduler.KOORDINATOR, koordinator=koord, source=source_text)
    if NRT_MATCH in enabled.get("*", set()):
        if NRT_MATCH in enabled.get("preBind", set()):
            return SchedulerProfile(name, Scheduler.CRANE, source=source_text)
        nrt = _nrt_args(args.get(NRT_MATCH, {}), f"{path}.pluginConfig")
        return SchedulerProfile(name, Scheduler.SCHEDULER_PLUGINS, nrt=nrt, source=source_text)
    return SchedulerProfile(name, Scheduler.DEFAULT, source=source_text)


def _enabled_plugins(plugins: Any, path: str) -> dict[str, set[str]]:
    """Plugin names enabled per extension point, and under "*" at any point."""
    if not isinstance(plugins, Mapping):
        raise ProfileError(f"{path}: expected an object")
    enabled: dict[str, set[str]] = {"*": set()}
    for point, config in plugins.items():
        if not isinstance(config, Mapping):
            raise ProfileError(f"{path}.{point}: expected an object")
        names = set(_plugin_names(config.get("enabled") or [], f"{path}.{point}.enabled"))
        names -= set(_plugin_names(config.get("disabled") or [], f"{path}.{point}.disabled"))
        enabled[point] = names
        enabled["*"] |= names
    multi = enabled.get("multiPoint", set())
    for point in list(enabled):
        enabled[point] |= multi
    return enabled


def _plugin_names(entries: Any, path: str) -> list[str]:
    if not isinstance(entries, list):
        raise ProfileError(f"{path}: expected a list")
    names = []
    for i, entry in enumerate(entries):
        name = entry.get("name") if isinstance(entry, Mapping) else None
        if not isinstance(name, str) or not name:
            raise ProfileError(f"{path}[{i}].name: expected a plugin name")
        names.append(name)
    return names


def _plugin_args(entries: Any, path: str) -> dict[str, Mapping[str, Any]]:
    if not isinstance(entries, list):
        raise ProfileError(f"{path}: expected a list")
    args: dict[str, Mapping[str, Any]] = {}
    for i, entry in enumerate(entries):
        if not isinstance(entry, Mapping) or not isinstance(entry.get("name"), str):
            raise ProfileError(f"{path}[{i}]: expected {{name, args}}")
        value = entry.get("args") or {}
        if not isinstance(value, Mapping):
            raise ProfileError(f"{path}[{i}].args: expected an object")
        args[entry["name"]] = value
    return args


def _strategy(args: Mapping[str, Any], key: str, path: str) -> tuple[str | None, dict[str, int]]:
    """`<key>: {type, resources[{name, weight}]}`: the type (None when unset) and weights."""
    raw = args.get(key) or {}
    if not isinstance(raw, Mapping):
        raise ProfileError(f"{path}.{key}: expected an object")
    kind = raw.get("type")
    if kind is not None and not isinstance(kind, str):
        raise ProfileError(f"{path}.{key}.type: expected a string")
    weights: dict[str, int] = {}
    for i, entry in enumerate(raw.get("resources") or []):
        name = entry.get("name") if isinstance(entry, Mapping) else None
        weight = entry.get("weight", 1) if isinstance(entry, Mapping) else None
        if not isinstance(name, str) or not name:
            raise ProfileError(f"{path}.{key}.resources[{i}].name: expected a resource name")
        if isinstance(weight, bool) or not isinstance(weight, int) or weight < 1:
            raise ProfileError(f"{path}.{key}.resources[{i}].weight: expected a whole number ≥ 1")
        weights[name] = weight
    return kind or None, weights


def _nrt_args(args: Mapping[str, Any], path: str) -> NRTMatchConfig:
    kind, weights = _strategy(args, "scoringStrategy", f"{path}.{NRT_MATCH}")
    config: dict[str, Any] = {}
    if kind is not None:
        try:
            config["scoring_strategy"] = ScoringStrategy(kind)
        except ValueError:
            choices = ", ".join(s.value for s in ScoringStrategy)
            raise ProfileError(
                f"{path}.{NRT_MATCH}.scoringStrategy.type: {kind!r} is not one of {choices}"
            ) from None
    if weights:
        config["resource_weights"] = MappingProxyType(weights)
    return NRTMatchConfig(**config)


def _koordinator_args(args: Mapping[str, Any], path: str) -> KoordConfig:
    where = f"{path}.{NODE_NUMA_RESOURCE}"
    kind, weights = _strategy(args, "scoringStrategy", where)
    numa_kind, _ = _strategy(args, "numaScoringStrategy", where)
    config: dict[str, Any] = {}
    for key, value in (("scoring_strategy", kind), ("numa_scoring_strategy", numa_kind)):
        if value is not None and value not in KOORD_STRATEGIES:
            choices = sorted(KOORD_STRATEGIES)
            raise ProfileError(f"{where}: scoring type {value!r} is not one of {choices}")
        if value is not None:
            config[key] = value
    if weights:
        config["resource_weights"] = MappingProxyType(weights)
    bind = args.get("defaultCPUBindPolicy")
    if bind is not None:
        if bind not in KOORD_BIND_POLICIES:
            choices = sorted(KOORD_BIND_POLICIES)
            raise ProfileError(f"{where}.defaultCPUBindPolicy: {bind!r} is not one of {choices}")
        config["default_cpu_bind_policy"] = bind
    return KoordConfig(**config)


# --- which profile sees a pod ----------------------------------------------------------

KOORDINATOR_MARKS = (ANN_KOORD_RESOURCE_SPEC, ANN_KOORD_NUMA_SPEC, ANN_KOORD_RESERVATION_AFFINITY)
CRANE_MARKS = (ANN_CRANE_CPU_POLICY, ANN_CRANE_AWARENESS)


def pod_affiliation(pod: PodSpec) -> Scheduler | None:
    """The system whose own labels or annotations the pod carries (None: none, or both)."""
    marked = any(a in pod.annotations for a in KOORDINATOR_MARKS)
    koordinator = LABEL_KOORD_QOS in pod.labels or marked
    crane = any(a in pod.annotations for a in CRANE_MARKS)
    if koordinator == crane:
        return None
    return Scheduler.KOORDINATOR if koordinator else Scheduler.CRANE


@dataclass(frozen=True, slots=True)
class Judge:
    """Who judges a what-if: the system (AUTO: each node by its NRT flavour, groups
    ranked apart), the profile when one applies, and why, in a sentence."""

    system: Scheduler
    profile: SchedulerProfile | None
    how: str


def resolve_judge(
    pod: PodSpec,
    scheduler_name: str,
    profiles: Sequence[SchedulerProfile],
    requested: Scheduler = Scheduler.AUTO,
) -> Judge:
    """The profile `scheduler_name` picks, else the system the pod's own marks name.

    `requested` other than AUTO overrides both (the what-if's `scheduler` option)."""
    name = scheduler_name or DEFAULT_SCHEDULER_NAME
    if requested is not Scheduler.AUTO:
        return Judge(requested, None, f"the {requested.value} system, as asked")
    by_name = {p.scheduler_name: p for p in (*BUILT_IN_PROFILES, *profiles)}
    profile = by_name.get(name)
    if profile is not None:
        how = f"spec.schedulerName {name!r} is profile {profile.source}: {profile.system.value}"
        return Judge(profile.system, profile, how)
    affiliated = pod_affiliation(pod)
    if affiliated is not None:
        how = (
            f"no profile is named {name!r}; the pod carries {affiliated.value}'s own "
            f"labels or annotations, so {affiliated.value} judges it"
        )
        return Judge(affiliated, None, how)
    how = (
        f"no profile is named {name!r} and the pod carries no system's own labels: each "
        "node is judged by the system its NRT flavour names, and each system's nodes are "
        "ranked apart (their scores are not comparable)"
    )
    return Judge(Scheduler.AUTO, None, how)
