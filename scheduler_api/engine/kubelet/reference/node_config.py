"""What a node publishes of its kubelet's configuration, and whether the kubelet starts.

The CPU manager's policy and options (koordlet's `kubelet.koordinator.sh/cpu-manager-policy`),
the Topology Manager's policy, scope and options (the kubelet's own when known, else the
NRT: scheduler-plugins' `nodeconfig.TopologyManagerFromNodeResourceTopology` and the
`topologyManagerOption<Camel>` attributes), the Memory Manager's policy, and the
start-up checks the kubelet runs on them (kubernetes v1.35
pkg/kubelet/cm/cpumanager/policy_options.go `NewStaticPolicyOptions`,
`ValidateStaticPolicyOptions`; pkg/kubelet/cm/topologymanager/policy_options.go
`NewPolicyOptions`). `kubelet_rules` says, one line per manager, which of them judged a
node. `admission.kubelet_pinning` reads these; nothing here pins a CPU.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from scheduler_api.engine.kubelet.reference.cpu_topology import CPUTopology, format_cpuset
from scheduler_api.engine.kubelet.reference.cpumanager import (
    ALPHA_GATE,
    BETA_GATE,
    STATIC_OPTIONS,
    Maturity,
    StaticPolicyOptions,
    parse_static_policy_options,
    shared_pool,
    validate_static_policy_options,
)
from scheduler_api.engine.kubelet.reference.memory_state import (
    node_memory,
)
from scheduler_api.engine.kubelet.reference.topologymanager import (
    MAX_ALLOWABLE_NUMA_NODES,
    TopologyManagerOptions,
    parse_topology_manager_options,
)
from scheduler_api.engine.model.results import Reason, ReasonCheck
from scheduler_api.engine.model.snapshot import (
    AllocationSource,
    NodeSnapshot,
    TopologyManagerPolicy,
    TopologyManagerScope,
)
from scheduler_api.engine.schedulerplugins.reference.common import (
    TopologyManagerConfig,
    resolve_topology_manager,
)

# --cpu-manager-policy-options name -> StaticPolicyOptions field
# --cpu-manager-policy-options name -> StaticPolicyOptions field
OPTION_FLAGS = {name: field for name, (field, _) in STATIC_OPTIONS.items()}


def static_options(
    options: Mapping[str, str], gates: Mapping[str, bool] | None = None
) -> StaticPolicyOptions:
    """The static policy's options as the kubelet parses them (`NewStaticPolicyOptions`);
    `ValueError` with the kubelet's reason to refuse them. `gates`: the kubelet's
    feature gates, their defaults when not given."""
    return parse_static_policy_options(options, gates)


def published_topology_manager(node: NodeSnapshot) -> TopologyManagerConfig:
    """The Topology Manager configuration the node's NRT publishes."""
    return resolve_topology_manager(node.topology_policies, node.nrt_attributes)


def kubelet_policy(node: NodeSnapshot) -> tuple[TopologyManagerPolicy, TopologyManagerScope]:
    """The kubelet's real configuration when known, else what the NRT says it is."""
    resolved = published_topology_manager(node)
    return node.tm_policy or resolved.policy, node.tm_scope or resolved.scope


# What a node publishes of its kubelet's CPU and Memory Managers (`kubelet_class`).
KUBELET_MODELLED, KUBELET_NONE, KUBELET_UNKNOWN = 0, 1, 2


def kubelet_class(node: NodeSnapshot) -> int:
    """KUBELET_MODELLED: `kubelet_pinning` reproduces the node's admission of a
    Guaranteed pod (the static CPU policy with a published CPU layout, or the Static
    Memory Manager with its per-NUMA memory); else as `cpu_manager_class`."""
    if node_memory(node).static:
        return KUBELET_MODELLED
    return cpu_manager_class(node)


def memory_manager_static(node: NodeSnapshot) -> bool:
    """The node runs the Static Memory Manager and publishes its per-NUMA memory: the
    kubelet's admission of a Guaranteed pod then aligns memory, whole CPUs or not."""
    return node_memory(node).static


def cpu_manager_class(node: NodeSnapshot) -> int:
    """KUBELET_MODELLED: the static policy with a published CPU layout, which
    `kubelet_pinning` reproduces; KUBELET_NONE: the none policy, which pins nothing;
    KUBELET_UNKNOWN: neither is published."""
    if node.cpu_manager_policy == "none":
        return KUBELET_NONE
    if node.cpus and node.cpu_manager_policy == "static":
        return KUBELET_MODELLED
    return KUBELET_UNKNOWN


def pinned_cpus(node: NodeSnapshot) -> frozenset[int]:
    """CPUs the kubelet has already handed out (koordlet's pod-cpu-allocs)."""
    return frozenset(
        cpu for a in node.allocations if a.source is AllocationSource.KUBELET for cpu in a.cpuset
    )


def closest_numa_distances(
    node: NodeSnapshot, topology: CPUTopology
) -> dict[int, dict[int, int]] | None:
    """The NUMA distance table when the Topology Manager prefers the closest NUMA nodes.

    The option comes from the kubelet's configuration when known, else from the NRT's
    attributes; the distances from the NRT zones' costs. None when the option is off,
    or when the costs miss a pair of the machine's NUMA nodes: the merge then prefers
    the narrowest mask, as without the option.
    """
    return numa_distances(node, topology.numa_nodes())


def numa_distances(node: NodeSnapshot, numa_ids: Sequence[int]) -> dict[int, dict[int, int]] | None:
    """`closest_numa_distances` over the NUMA nodes `numa_ids`."""
    if not prefers_closest_numa_nodes(node):
        return None
    costs = {zone.numa_id: zone.costs for zone in node.zones if zone.zone_type == "Node"}
    if not all(b in costs.get(a, {}) for a in numa_ids for b in numa_ids):
        return None
    return {a: {b: costs[a][b] for b in numa_ids} for a in numa_ids}


def too_many_numa_nodes(
    node: NodeSnapshot, topology: CPUTopology, policy: TopologyManagerPolicy
) -> Reason | None:
    """kubelet refuses to start a Topology Manager over more NUMA nodes than allowed."""
    return too_many_numa_nodes_for(node, topology.num_numa_nodes, policy)


def too_many_numa_nodes_for(
    node: NodeSnapshot, numa_count: int, policy: TopologyManagerPolicy
) -> Reason | None:
    """`too_many_numa_nodes` for a machine of `numa_count` NUMA nodes."""
    allowed = allowed_numa_nodes(node)
    if policy is TopologyManagerPolicy.NONE or numa_count <= allowed:
        return None
    message = (
        f"kubelet does not start the Topology Manager on {numa_count} NUMA nodes: "
        f"more than max-allowable-numa-nodes ({allowed})"
    )
    return Reason(ReasonCheck.KUBELET_ADMISSION, message=message)


def _not_started(why: str) -> Reason:
    return Reason(ReasonCheck.KUBELET_ADMISSION, message=f"kubelet would not start: {why}")


def options_or_refusal(
    node: NodeSnapshot, topology: CPUTopology, policy: TopologyManagerPolicy
) -> StaticPolicyOptions | Reason:
    """The static policy's options, or why the kubelet would refuse to start: the
    Topology Manager's options first (the kubelet builds that manager first), then the
    CPU manager's (`NewStaticPolicyOptions`: unknown names, options whose maturity's
    feature gate is off, bad values, incompatible pairs; `ValidateStaticPolicyOptions`:
    align-by-socket against single-numa-node and the machine)."""
    try:
        topology_manager_options(node)
        options = static_options(node.cpu_manager_options, kubelet_feature_gates(node))
        single_numa = policy is TopologyManagerPolicy.SINGLE_NUMA_NODE
        validate_static_policy_options(options, topology, single_numa)
    except ValueError as error:
        return _not_started(f"{error}{_gates_note(node)}")
    return options


# --- the kubelet's options as published, and the rules that judged a node ------------

TM_OPTION_ATTRIBUTE_PREFIX = "topologyManagerOption"
_GATES_ASSUMED = (
    " (the node publishes no kubelet feature gates: each is taken at its default, "
    "alpha-level policy options off and beta-level on, except the gate of an option the "
    "running kubelet reports, which must be on)"
)


def kubelet_feature_gates(node: NodeSnapshot) -> Mapping[str, bool]:
    """The kubelet's feature gates as far as the node tells: its own when published.

    Otherwise the gates of the options it reports are on: koordlet reads the CPU manager
    options of the kubelet that runs, and a kubelet does not start with an alpha- or
    beta-level option whose gate is off. Every other gate keeps its default."""
    if node.kubelet_feature_gates:
        return node.kubelet_feature_gates
    inferred: dict[str, bool] = {}
    for name in node.cpu_manager_options:
        maturity = STATIC_OPTIONS[name][1] if name in STATIC_OPTIONS else None
        if maturity is Maturity.ALPHA:
            inferred[ALPHA_GATE] = True
        elif maturity is Maturity.BETA:
            inferred[BETA_GATE] = True
    return inferred


def _gates_note(node: NodeSnapshot) -> str:
    return "" if node.kubelet_feature_gates else _GATES_ASSUMED


def option_of_attribute(name: str) -> str:
    """The kubelet option an NRT attribute `topologyManagerOption<Camel>` stands for
    (scheduler-plugins' README convention): `PreferClosestNumaNodes` ->
    `prefer-closest-numa-nodes`."""
    camel = name.removeprefix(TM_OPTION_ATTRIBUTE_PREFIX)
    return "".join(f"-{c.lower()}" if c.isupper() else c for c in camel).lstrip("-")


def published_tm_options(node: NodeSnapshot) -> dict[str, str]:
    """`--topology-manager-policy-options`: the kubelet's own when known (`tm_options`),
    else those the NRT publishes as `topologyManagerOption<Camel>` attributes."""
    if node.tm_options:
        return dict(node.tm_options)
    return {
        option_of_attribute(name): value
        for name, value in node.nrt_attributes.items()
        if name.startswith(TM_OPTION_ATTRIBUTE_PREFIX) and name != TM_OPTION_ATTRIBUTE_PREFIX
    }


def topology_manager_options(node: NodeSnapshot) -> TopologyManagerOptions:
    """The Topology Manager's options as the kubelet parses them; `ValueError` with its
    reason to refuse them."""
    return parse_topology_manager_options(published_tm_options(node), kubelet_feature_gates(node))


def prefers_closest_numa_nodes(node: NodeSnapshot) -> bool:
    """prefer-closest-numa-nodes is on (false for options the kubelet refuses: it then
    does not start, which `options_or_refusal` reports)."""
    try:
        return topology_manager_options(node).prefer_closest
    except ValueError:
        return False


def allowed_numa_nodes(node: NodeSnapshot) -> int:
    """The most NUMA nodes the Topology Manager starts on: the kubelet's configuration
    when known (`tm_max_numa_nodes`), else its max-allowable-numa-nodes option as
    published, else scheduler-plugins' reading of the NRT (`topologyManagerMaxNUMANodes`,
    default 8)."""
    if node.tm_max_numa_nodes:
        return node.tm_max_numa_nodes
    if MAX_ALLOWABLE_NUMA_NODES in published_tm_options(node):
        try:
            return topology_manager_options(node).max_allowable_numa_nodes
        except ValueError:
            pass  # refused at start-up: `options_or_refusal` says why
    return published_topology_manager(node).max_numa_nodes


def node_cpu_topology(node: NodeSnapshot) -> CPUTopology:
    """The node's CPU topology with its uncore caches when it publishes them."""
    return CPUTopology.from_cpus(node.cpus, node.uncore_caches or None)


@dataclass(frozen=True, slots=True)
class KubeletCPUPools:
    """The static policy's CPU sets on a node: `shared` (the default cpuset, where
    Burstable, BestEffort and fractional Guaranteed containers run), `available` (open
    to exclusive allocation: shared less reserved), `reserved` and `exclusive` (held by
    pinned containers)."""

    shared: frozenset[int]
    available: frozenset[int]
    reserved: frozenset[int]
    exclusive: frozenset[int]


def kubelet_cpu_pools(node: NodeSnapshot) -> KubeletCPUPools | None:
    """The static policy's pools on `node`; None when it does not run the static policy
    over a published CPU table, or would not start with its options."""
    if kubelet_class(node) != KUBELET_MODELLED:
        return None
    topology = node_cpu_topology(node)
    options = options_or_refusal(node, topology, kubelet_policy(node)[0])
    if isinstance(options, Reason):
        return None
    exclusive, reserved = pinned_cpus(node), node.kubelet_reserved_cpus
    shared = shared_pool(topology, exclusive, reserved, options)
    return KubeletCPUPools(shared, shared - reserved, reserved, exclusive)


def kubelet_rules(node: NodeSnapshot) -> tuple[str, ...]:
    """The kubelet rules that judge a pod on `node`: its CPU manager policy and options,
    its Topology Manager policy/scope and options, and its Memory Manager, one line each,
    saying where the kubelet would not start and what was assumed for data the node does
    not publish."""
    return (_cpu_manager_rule(node), _topology_manager_rule(node), _memory_manager_rule(node))


def _cpu_manager_rule(node: NodeSnapshot) -> str:
    policy = node.cpu_manager_policy
    if policy != "static":
        return f"cpu-manager {policy}" if policy else "cpu-manager: policy not published"
    try:
        options = static_options(node.cpu_manager_options, kubelet_feature_gates(node))
    except ValueError as error:
        return f"cpu-manager static: the kubelet would not start: {error}{_gates_note(node)}"
    enabled = [name for name, field in OPTION_FLAGS.items() if getattr(options, field)]
    texts = ", ".join(_option_text(node, name) for name in enabled)
    return f"cpu-manager static: {texts or 'no options'}"


def _option_text(node: NodeSnapshot, name: str) -> str:
    if name == "strict-cpu-reservation":
        reserved = format_cpuset(node.kubelet_reserved_cpus)
        return f"{name} (reserved CPUs {reserved} out of the shared pool)"
    if name == "prefer-align-cpus-by-uncorecache":
        if node.uncore_caches:
            caches = len(set(node.uncore_caches.values()))
            return f"{name} ({caches} uncore caches, as the node publishes them)"
        return (
            f"{name} (uncore caches unknown: one per socket assumed, the kubelet's own "
            "fallback when no L3 cache is reported; the real kubelet may pick other CPUs)"
        )
    return name


def _topology_manager_rule(node: NodeSnapshot) -> str:
    policy, scope = kubelet_policy(node)
    head = f"topology-manager {policy}/{scope}"
    try:
        options = topology_manager_options(node)
    except ValueError as error:
        return f"{head}: the kubelet would not start: {error}{_gates_note(node)}"
    parts = ["prefer-closest-numa-nodes"] if options.prefer_closest else []
    parts.append(f"max-allowable-numa-nodes={allowed_numa_nodes(node)}")
    return f"{head}: {', '.join(parts)}"


def _memory_manager_rule(node: NodeSnapshot) -> str:
    """The Memory Manager's line: its policy and where it was read, and what its
    machine state leaves unknown (`memorymanager.node_memory`)."""
    memory = node_memory(node)
    if memory.policy is None:
        return f"memory-manager: {'; '.join(memory.notes)}"
    source = "kubelet" if node.memory_manager_policy else "NRT attribute memoryManagerPolicy"
    head = f"memory-manager {memory.policy.value} ({source})"
    return f"{head}: {'; '.join(memory.notes)}" if memory.notes else head
