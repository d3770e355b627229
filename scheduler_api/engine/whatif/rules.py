"""Which rules judged a node: what a what-if answer states beside each verdict.

A verdict is only as good as the configuration it was judged under, and that differs
node by node: the Topology Manager policy an NRT publishes, Koordinator's node labels,
Crane's topology awareness, and behind schedulers that pick no CPUs, the kubelet's CPU,
Topology and Memory Managers (`kubelet.reference.node_config.kubelet_rules`). Each line
names the rule, its value and where the value was read, so a user can tell a verdict
made on published data from one made on an assumption.

The scheduler's own arguments (scoring strategy, weights) are the same for every node
and are stated once per answer (`judged_by.arguments`), not here.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

from scheduler_api.engine.koordinator.reference.state import (
    KoordConfig,
    node_cpu_bind_policy,
    node_numa_policy,
    node_view,
    numa_allocate_strategy,
)
from scheduler_api.engine.kubelet.reference.node_config import (
    kubelet_rules,
    published_topology_manager,
)
from scheduler_api.engine.model.snapshot import NodeSnapshot
from scheduler_api.engine.schedulerplugins.reference.common import (
    POLICY_FROM_LEGACY,
    POLICY_VALUES,
)
from scheduler_api.engine.whatif.admission import KUBELET_PINS
from scheduler_api.engine.whatif.systems import Scheduler

POLICY_ATTRIBUTE = "topologyManagerPolicy"


def node_rules(node: NodeSnapshot, system: Scheduler) -> tuple[str, ...]:
    """The rules `system` and, behind it, the kubelet judged `node` by; one line each.

    Worked out once per node and system (a snapshot never changes)."""
    return node.derived(_KEYS[system], _RULES[system])


def _nrt_source(node: NodeSnapshot) -> str:
    """Where scheduler-plugins read the Topology Manager policy from
    (nodeconfig.TopologyManagerFromNodeResourceTopology: an attribute it does not know
    is ignored, and the policy then comes from topologyPolicies or the default)."""
    published = node.nrt_attributes.get(POLICY_ATTRIBUTE, "")
    if published in POLICY_VALUES:
        return "NRT attributes"
    ignored = f"NRT attribute {POLICY_ATTRIBUTE}={published!r} ignored, " if published else ""
    if node.topology_policies and node.topology_policies[0] in POLICY_FROM_LEGACY:
        return f"{ignored}NRT topologyPolicies, deprecated"
    if node.topology_policies:
        legacy = node.topology_policies[0]
        return f"{ignored}NRT topologyPolicies {legacy!r} not known: none assumed"
    return f"{ignored}not published: none assumed" if not ignored else f"{ignored}none assumed"


def _scheduler_plugins(node: NodeSnapshot) -> tuple[str, ...]:
    resolved = published_topology_manager(node)
    head = (
        f"NodeResourceTopologyMatch: topology-manager {resolved.policy}/{resolved.scope} "
        f"({_nrt_source(node)})"
    )
    return (head,)


def _default(node: NodeSnapshot) -> tuple[str, ...]:
    return ("default-scheduler: node-level filters only, no NUMA plugin",)


def _koordinator(node: NodeSnapshot) -> tuple[str, ...]:
    config = KoordConfig()
    view = node_view(node, config)
    policy = node_numa_policy(node, view)
    source = "node label" if node.koord_numa_topology_policy_label else "NRT topologyPolicies"
    strategy = numa_allocate_strategy(node, config)
    strategy_source = "node label" if node.numa_allocate_strategy_label else "plugin default"
    return (
        f"NodeNUMAResource: numa-topology-policy {policy or 'None'} ({source}), "
        f"numa-allocate-strategy {strategy} ({strategy_source}), "
        f"cpu-bind-policy {node_cpu_bind_policy(node)}",
        "kubelet: koordlet pins the CPUs koord-scheduler chose; the kubelet's own "
        "admission is not modelled",
    )


def _crane(node: NodeSnapshot) -> tuple[str, ...]:
    aware = node.crane_topology_policy == "SingleNUMANodePodLevel"
    awareness = (
        "on (NRT crane topologyManagerPolicy SingleNUMANodePodLevel)"
        if aware
        else f"off (NRT crane topologyManagerPolicy {node.crane_topology_policy or 'not set'})"
    )
    agent = node.crane_cpu_manager_policy or "not published"
    return (
        f"crane-scheduler: topology-awareness {awareness} unless the pod's "
        "topology-awareness annotation says otherwise",
        f"crane-agent: cpu manager policy {agent}; the kubelet's own admission is not modelled",
    )


def _kubelet(node: NodeSnapshot) -> tuple[str, ...]:
    return tuple(f"kubelet: {line}" for line in kubelet_rules(node))


def _with_kubelet(
    system: Scheduler, scheduler: Callable[[NodeSnapshot], tuple[str, ...]]
) -> Callable[[NodeSnapshot], tuple[str, ...]]:
    """The scheduler's lines, then the kubelet's where it picks the cpuset behind it."""
    if system not in KUBELET_PINS:
        return scheduler
    return lambda node: (*scheduler(node), *_kubelet(node))


_SCHEDULER_RULES: Mapping[Scheduler, Callable[[NodeSnapshot], tuple[str, ...]]] = {
    Scheduler.SCHEDULER_PLUGINS: _scheduler_plugins,
    Scheduler.DEFAULT: _default,
    Scheduler.KOORDINATOR: _koordinator,
    Scheduler.CRANE: _crane,
}
_RULES = {system: _with_kubelet(system, rules) for system, rules in _SCHEDULER_RULES.items()}
_KEYS = {system: f"whatif.rules.{system.value}" for system in _RULES}
