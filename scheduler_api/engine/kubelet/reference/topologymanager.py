"""Topology Manager hint merging, as kubelet's ``pkg/kubelet/cm/topologymanager`` does it.

One small class per policy sits behind the two-method :class:`Policy` interface
(``merge`` and ``can_admit``). :class:`HintMerger` holds the shared merge: the
cross product of every provider's hints, a bitwise AND per permutation, and the
comparison that picks the best merged hint. Comments below follow kubelet's
``policy.go`` (``HintMerger.compare``) so the two can be read side by side.

Encoding used here: a provider's hints are one ``list[TopologyHint]``. An empty
list means "no preference" (kubelet's nil hints, read as ``[{nil, true}]``); to
say "no NUMA combination can satisfy this resource" (kubelet's empty, non-nil
list) pass ``[TopologyHint(None, False)]`` — :func:`hints_by_resource` does that.

:func:`resource_hints` is the device manager's hint generator (and the memory
manager's without its group rules); the CPU manager's lives in ``cpumanager`` (it needs
the CPU topology), the Static Memory Manager's in ``memorymanager``.

:func:`parse_topology_manager_options` is ``NewPolicyOptions`` of
``topologymanager/policy_options.go``: ``--topology-manager-policy-options`` as the
kubelet reads them at start-up, with the options' maturity as of v1.35 (both stable).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from itertools import product
from typing import NamedTuple

from scheduler_api.engine.kubelet.reference.bitmask import NUMAMask, and_all, iterate_masks
from scheduler_api.engine.model.snapshot import TopologyManagerPolicy, go_parse_bool

# Topology Manager policies (kubelet ``--topology-manager-policy``), stated once in the model
PolicyName = TopologyManagerPolicy


@dataclass(frozen=True, slots=True)
class TopologyHint:
    """A NUMA affinity and whether it is preferred. ``numa=None`` means any NUMA node."""

    numa: frozenset[int] | None
    preferred: bool

    def __post_init__(self) -> None:
        if self.numa is not None:
            # Accept any iterable of ids but store a frozenset, validated once here.
            nodes = frozenset(self.numa)
            NUMAMask.of(nodes)
            object.__setattr__(self, "numa", nodes)


class MaskHint(NamedTuple):
    """Internal hint form: the affinity as a bitmask (``None`` = kubelet's nil)."""

    mask: NUMAMask | None
    preferred: bool

    @classmethod
    def of(cls, hint: TopologyHint) -> MaskHint:
        return cls(None if hint.numa is None else NUMAMask.of(hint.numa), hint.preferred)


@dataclass(frozen=True)
class NUMAInfo:
    """The machine's NUMA node ids and, for prefer-closest, their distance table."""

    nodes: tuple[int, ...]
    distances: Mapping[int, Mapping[int, int]] | None = None

    @property
    def default_mask(self) -> NUMAMask:
        """All NUMA nodes: what kubelet's ``DefaultAffinityMask`` returns."""
        return NUMAMask.of(self.nodes)

    def narrowest(self, m1: NUMAMask, m2: NUMAMask) -> NUMAMask:
        return m1 if m1.is_narrower_than(m2) else m2

    def distance_sum(self, mask: NUMAMask) -> int:
        """Sum of distances over all ordered pairs (self pairs included). O(bits^2)."""
        table = self.distances or {}
        return sum(table[a][b] for a in mask.bits for b in mask.bits)

    def closest(self, m1: NUMAMask, m2: NUMAMask) -> NUMAMask:
        """Narrower wins; equal widths compare mean distance, then the smaller value.

        Equal widths mean equal pair counts, so comparing the integer sums is the
        same as comparing kubelet's float means, without rounding.
        """
        if m1.count() != m2.count():
            return self.narrowest(m1, m2)
        d1, d2 = self.distance_sum(m1), self.distance_sum(m2)
        if d1 == d2:
            return m1 if m1.is_less_than(m2) else m2
        return m1 if d1 < d2 else m2


def _narrowest_count(hints: Sequence[MaskHint]) -> int | None:
    masks = [hint.mask for hint in hints if hint.mask is not None]
    if not masks:
        return None
    best = masks[0]
    for mask in masks[1:]:
        if mask.is_narrower_than(best):
            best = mask
    return best.count()


def max_of_min_affinity_counts(hints: Sequence[Sequence[MaskHint]]) -> int:
    """Largest, over providers, of the bit count of that provider's narrowest hint."""
    counts = [_narrowest_count(provider) for provider in hints]
    return max((count for count in counts if count is not None), default=0)


def merge_permutation(default: NUMAMask, permutation: Sequence[MaskHint]) -> MaskHint:
    """AND the masks of one permutation (nil = any NUMA).

    Preferred only when every hint is preferred *and* every non-nil mask equals
    the first non-nil mask (newer kubelet; older releases skipped the equality).
    """
    masks = [hint.mask for hint in permutation if hint.mask is not None]
    preferred = all(hint.preferred for hint in permutation)
    preferred = preferred and all(mask == masks[0] for mask in masks)
    return MaskHint(and_all(default, *masks), preferred)


class HintMerger:
    """Picks the best merged hint over the cross product of provider hints.

    Cost: O(prod(len(h) for h in hints) * len(hints)); kubelet bounds this by
    refusing more than 8 NUMA nodes by default.
    """

    def __init__(
        self,
        numa_info: NUMAInfo,
        hints: Sequence[Sequence[MaskHint]],
        policy: PolicyName,
        *,
        prefer_closest: bool = False,
    ) -> None:
        self.numa_info = numa_info
        self.hints = hints
        # Closest ordering never applies to single-numa-node (all winners have one bit).
        self.use_closest = prefer_closest and policy != PolicyName.SINGLE_NUMA_NODE
        # Target width for non-preferred hints: the widest of the providers'
        # narrowest needs, so every provider's smallest possible allocation fits.
        self.best_non_preferred_affinity_count = max_of_min_affinity_counts(hints)

    def compare_masks(self, current: MaskHint, candidate: MaskHint) -> MaskHint:
        """Same preference on both sides: keep the fitter mask, current on a tie."""
        assert current.mask is not None and candidate.mask is not None
        if candidate.mask == current.mask:
            return current
        pick = self.numa_info.closest if self.use_closest else self.numa_info.narrowest
        return current if pick(current.mask, candidate.mask) == current.mask else candidate

    def compare(self, current: MaskHint | None, candidate: MaskHint) -> MaskHint | None:
        """kubelet's ``HintMerger.compare``: return whichever of the two is better."""
        assert candidate.mask is not None
        if candidate.mask.count() == 0:
            return current  # an empty intersection can never be allocated
        if current is None:
            return candidate
        if current.preferred != candidate.preferred:
            return candidate if candidate.preferred else current  # preferred always wins
        if current.preferred:
            return self.compare_masks(current, candidate)
        return self._compare_non_preferred(current, candidate)

    def _compare_non_preferred(self, current: MaskHint, candidate: MaskHint) -> MaskHint:
        """Both non-preferred: get as close as possible to the target width, never above it."""
        assert current.mask is not None and candidate.mask is not None
        target = self.best_non_preferred_affinity_count
        cur, cand = current.mask.count(), candidate.mask.count()
        if cur > target:  # case 1: already too wide, anything fitter is better
            return self.compare_masks(current, candidate)
        if cur == target:  # case 2: on target, only a fitter on-target mask replaces it
            return current if cand != target else self.compare_masks(current, candidate)
        if cand > target:  # case 3a: never overshoot the target
            return current
        if cand == target:  # case 3b: reaching the target wins outright
            return candidate
        if cand != cur:  # cases 3ca / 3cb: climb towards the target
            return candidate if cand > cur else current
        return self.compare_masks(current, candidate)  # case 3cc: same width

    def merge(self) -> MaskHint:
        """Best merged hint; ``{all NUMA, not preferred}`` when nothing fits."""
        default = self.numa_info.default_mask
        best: MaskHint | None = None
        for permutation in product(*self.hints):
            best = self.compare(best, merge_permutation(default, permutation))
        return best if best is not None else MaskHint(default, False)


def filter_provider_hints(provider_hints: Iterable[Sequence[TopologyHint]]) -> list[list[MaskHint]]:
    """A provider with no hints has no preference: it becomes ``[{nil, true}]``."""
    return [[MaskHint.of(h) for h in hints] or [MaskHint(None, True)] for hints in provider_hints]


def filter_single_numa_hints(hints: Sequence[Sequence[MaskHint]]) -> list[list[MaskHint]]:
    """Keep only ``{nil, preferred}`` and single-node preferred hints, per provider."""
    return [
        [h for h in provider if h.preferred and (h.mask is None or h.mask.count() == 1)]
        for provider in hints
    ]


class Policy(ABC):
    """A Topology Manager policy: merge the providers' hints, then decide admission."""

    name: PolicyName

    def __init__(self, numa_info: NUMAInfo, *, prefer_closest: bool = False) -> None:
        self.numa_info = numa_info
        self.prefer_closest = prefer_closest

    @abstractmethod
    def merge(self, provider_hints: Sequence[Sequence[TopologyHint]]) -> tuple[TopologyHint, bool]:
        """Return the best merged hint and whether the pod is admitted."""

    @abstractmethod
    def can_admit(self, hint: TopologyHint) -> bool:
        """Whether a pod whose merged hint is ``hint`` is admitted."""

    def _merge_masks(self, hints: Sequence[Sequence[MaskHint]]) -> TopologyHint:
        merger = HintMerger(self.numa_info, hints, self.name, prefer_closest=self.prefer_closest)
        best = merger.merge()
        return _to_hint(best, self.numa_info.default_mask)


def _to_hint(hint: MaskHint, default: NUMAMask) -> TopologyHint:
    """A mask covering every NUMA node is reported as ``None`` (any NUMA)."""
    if hint.mask is None or hint.mask == default:
        return TopologyHint(None, hint.preferred)
    return TopologyHint(hint.mask.to_frozenset(), hint.preferred)


class NonePolicy(Policy):
    """``none``: no alignment, every pod admitted."""

    name = PolicyName.NONE

    def merge(self, provider_hints: Sequence[Sequence[TopologyHint]]) -> tuple[TopologyHint, bool]:
        hint = TopologyHint(None, True)
        return hint, self.can_admit(hint)

    def can_admit(self, hint: TopologyHint) -> bool:
        return True


class BestEffortPolicy(Policy):
    """``best-effort``: pick the best alignment, admit regardless."""

    name = PolicyName.BEST_EFFORT

    def merge(self, provider_hints: Sequence[Sequence[TopologyHint]]) -> tuple[TopologyHint, bool]:
        best = self._merge_masks(filter_provider_hints(provider_hints))
        return best, self.can_admit(best)

    def can_admit(self, hint: TopologyHint) -> bool:
        return True


class RestrictedPolicy(BestEffortPolicy):
    """``restricted``: same merge as best-effort, admit only a preferred hint."""

    name = PolicyName.RESTRICTED

    def can_admit(self, hint: TopologyHint) -> bool:
        return hint.preferred


class SingleNumaNodePolicy(Policy):
    """``single-numa-node``: only one-node (or don't-care) preferred hints take part."""

    name = PolicyName.SINGLE_NUMA_NODE

    def merge(self, provider_hints: Sequence[Sequence[TopologyHint]]) -> tuple[TopologyHint, bool]:
        hints = filter_single_numa_hints(filter_provider_hints(provider_hints))
        best = self._merge_masks(hints)
        return best, self.can_admit(best)

    def can_admit(self, hint: TopologyHint) -> bool:
        return hint.preferred


POLICIES: dict[PolicyName, type[Policy]] = {
    PolicyName.NONE: NonePolicy,
    PolicyName.BEST_EFFORT: BestEffortPolicy,
    PolicyName.RESTRICTED: RestrictedPolicy,
    PolicyName.SINGLE_NUMA_NODE: SingleNumaNodePolicy,
}


def parse_policy(policy: str) -> PolicyName:
    """``ValueError`` naming the accepted values when ``policy`` is unknown."""
    try:
        return PolicyName(policy)
    except ValueError:
        allowed = ", ".join(repr(str(name)) for name in PolicyName)
        raise ValueError(
            f"unknown topology manager policy {policy!r}; use one of {allowed}"
        ) from None


def build_numa_info(
    numa_nodes: Sequence[int],
    distances: Mapping[int, Mapping[int, int]] | None,
    need_distances: bool,
) -> NUMAInfo:
    """Validate the node list (and the distance table when it will be read)."""
    if not numa_nodes:
        raise ValueError("numa_nodes is empty: a machine has at least one NUMA node")
    if len(set(numa_nodes)) != len(numa_nodes):
        raise ValueError(f"numa_nodes has duplicates: {list(numa_nodes)}")
    NUMAMask.of(numa_nodes)
    if need_distances:
        table = distances or {}
        missing = [(a, b) for a in numa_nodes for b in numa_nodes if b not in table.get(a, {})]
        if missing:
            raise ValueError(
                "prefer_closest needs a distance for every ordered pair of NUMA nodes; "
                f"missing (from, to): {missing[:5]}"
            )
    return NUMAInfo(tuple(numa_nodes), distances)


def merge_hints(
    provider_hints: list[list[TopologyHint]],
    numa_nodes: list[int],
    policy: str,
    *,
    prefer_closest: bool = False,
    distances: dict[int, dict[int, int]] | None = None,
) -> tuple[TopologyHint, bool]:
    """Merge the providers' hints under ``policy``; return the best hint and admission.

    ``provider_hints`` holds one list per resource; an empty list is "no
    preference". The result's ``numa`` is ``None`` whenever kubelet would report
    nil or the all-NUMA default affinity. Cost: the product of the list sizes.
    """
    name = parse_policy(policy)
    need_distances = prefer_closest and name not in (PolicyName.NONE, PolicyName.SINGLE_NUMA_NODE)
    numa_info = build_numa_info(numa_nodes, distances, need_distances)
    return POLICIES[name](numa_info, prefer_closest=prefer_closest).merge(provider_hints)


def resource_hints(
    free_per_numa: dict[int, int], total_per_numa: dict[int, int], request: int
) -> list[TopologyHint]:
    """Hints for a per-NUMA quantity (memory, hugepages, devices).

    Follows the memory manager's ``calculateHints`` (and the device manager's
    ``generateDeviceTopologyHints``, which agrees for single-NUMA devices): masks
    whose total reaches ``request`` set the minimal width; masks whose free
    amount reaches it become hints, preferred when of minimal width. Not
    modelled here: devices attached to several NUMA nodes, and the memory manager's
    multi-NUMA group rules (``memorymanager.calculate_hints`` has them). Empty list
    and ``request == 0`` as in
    :func:`~scheduler_api.engine.kubelet.reference.cpumanager.cpu_hints`. Cost: O(2^N * N).
    """
    if request < 0:
        raise ValueError(f"a resource request cannot be negative; got {request}")
    extra = set(free_per_numa) - set(total_per_numa)
    if extra:
        raise ValueError(f"free amounts given for NUMA nodes {sorted(extra)} that have no total")
    if any(v < 0 for v in (*free_per_numa.values(), *total_per_numa.values())):
        raise ValueError("free and total amounts must not be negative")
    if request == 0:
        return [TopologyHint(None, True)]
    min_width, masks = len(total_per_numa), []
    for mask in iterate_masks(total_per_numa):
        if sum(total_per_numa[n] for n in mask.bits) < request:
            continue
        min_width = min(min_width, mask.count())
        if sum(free_per_numa.get(n, 0) for n in mask.bits) >= request:
            masks.append(mask)
    return [TopologyHint(m.to_frozenset(), m.count() == min_width) for m in masks]


def hints_by_resource(hints: Mapping[str, list[TopologyHint]]) -> list[list[TopologyHint]]:
    """Turn ``{resource: hints}`` into :func:`merge_hints` input, keeping kubelet's meaning.

    A resource whose generator found nothing (``[]``) becomes
    ``[TopologyHint(None, False)]``, exactly as kubelet's Topology Manager reads it.
    """
    return [list(h) if h else [TopologyHint(None, False)] for h in hints.values()]


# --- --topology-manager-policy-options (policy_options.go) -----------------------------

PREFER_CLOSEST_NUMA_NODES = "prefer-closest-numa-nodes"
MAX_ALLOWABLE_NUMA_NODES = "max-allowable-numa-nodes"
DEFAULT_MAX_ALLOWABLE_NUMA_NODES = 8
# name -> maturity at v1.35: prefer-closest-numa-nodes GA in v1.32, max-allowable-numa-nodes
# GA in v1.35. (kubernetes master after v1.35 adds the alpha numa-allocation-strategy and
# numa-score-weights, which v1.35 does not know.)
TOPOLOGY_MANAGER_OPTIONS: Mapping[str, str] = {
    PREFER_CLOSEST_NUMA_NODES: "stable",
    MAX_ALLOWABLE_NUMA_NODES: "stable",
}
TM_ALPHA_GATE = "TopologyManagerPolicyAlphaOptions"
TM_BETA_GATE = "TopologyManagerPolicyBetaOptions"
TM_DEFAULT_GATES: Mapping[str, bool] = {TM_ALPHA_GATE: False, TM_BETA_GATE: True}


@dataclass(frozen=True, slots=True)
class TopologyManagerOptions:
    """``PolicyOptions``: what the Topology Manager's options set."""

    prefer_closest: bool = False
    max_allowable_numa_nodes: int = DEFAULT_MAX_ALLOWABLE_NUMA_NODES


def _check_tm_option_available(name: str, gates: Mapping[str, bool]) -> None:
    """``CheckPolicyOptionAvailable``: known, and its maturity's gate on."""
    maturity = TOPOLOGY_MANAGER_OPTIONS.get(name)
    if maturity is None:
        raise ValueError(f'unknown Topology Manager Policy option: "{name}"')
    for level, gate in (("alpha", TM_ALPHA_GATE), ("beta", TM_BETA_GATE)):
        if maturity == level and not gates.get(gate, TM_DEFAULT_GATES[gate]):
            raise ValueError(
                f"topology manager policy {level}-level options not enabled, but option "
                f'"{name}" provided (it needs the {gate} feature gate)'
            )


def _max_allowable(name: str, value: str) -> int:
    """max-allowable-numa-nodes: Go's Atoi, at least the default 8."""
    text = value[1:] if value[:1] in "+-" else value
    if not (text.isascii() and text.isdigit()) or not -(2**63) <= int(value) < 2**63:
        raise ValueError(
            f'unable to convert policy option to integer "{name}": strconv.Atoi: '
            f'parsing "{value}": invalid syntax'
        )
    if int(value) < DEFAULT_MAX_ALLOWABLE_NUMA_NODES:
        raise ValueError(
            f'the minimum value of "{name}" should not be less than '
            f"{DEFAULT_MAX_ALLOWABLE_NUMA_NODES}"
        )
    return int(value)


def parse_topology_manager_options(
    raw: Mapping[str, str], gates: Mapping[str, bool] | None = None
) -> TopologyManagerOptions:
    """``NewPolicyOptions``: the options, or ``ValueError`` with why the kubelet refuses
    to start. Options are checked in name order (Go's map order is random)."""
    gates = gates or {}
    prefer_closest, max_numa = False, DEFAULT_MAX_ALLOWABLE_NUMA_NODES
    for name in sorted(raw):
        _check_tm_option_available(name, gates)
        value = raw[name]
        if name == PREFER_CLOSEST_NUMA_NODES:
            parsed = go_parse_bool(value)
            if parsed is None:
                raise ValueError(
                    f'bad value for option "{name}": strconv.ParseBool: parsing '
                    f'"{value}": invalid syntax'
                )
            prefer_closest = parsed
        else:
            max_numa = _max_allowable(name, value)
    return TopologyManagerOptions(prefer_closest, max_numa)
