"""Koordinator's NUMA topology manager merge (frameworkext/topologymanager).

The kubelet-style merge with koordinator's additions: a hint Score that breaks ties
between equally wide hints, Unsatisfied hints, and the singleNUMANodeExclusive check
against NUMA nodes already used by single- or multi-NUMA pods.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from itertools import product

from scheduler_api.engine.model.snapshot import NUMATopologyPolicy

__all__ = ["Hint", "MergeResult", "mask_str", "merge", "narrower"]


@dataclass(frozen=True, slots=True)
class Hint:
    """NUMATopologyHint; mask None is Go's nil affinity (any NUMA node)."""

    mask: frozenset[int] | None
    preferred: bool
    score: int = 0
    unsatisfied: bool = False


def mask_value(mask: frozenset[int]) -> int:
    return sum(1 << bit for bit in mask)


def mask_str(mask: frozenset[int] | None) -> str:
    """bitmask.String(): binary, padded to a multiple of 2 digits (Go's %v of the mask)."""
    return "<nil>" if mask is None else _mask_text(mask)


# A refusal quotes every hint of every width (255 masks on an 8-NUMA node), on every
# node it refuses; the masks of a machine's NUMA nodes are few and recur.
@lru_cache(maxsize=4096)
def _mask_text(mask: frozenset[int]) -> str:
    value = mask_value(mask)
    for shift in range(62, 0, -2):
        if value > 1 << shift:
            return format(value, f"0{shift + 2}b")
    return format(value, "02b")


def narrower(a: frozenset[int], b: frozenset[int]) -> bool:
    """IsNarrowerThan: fewer NUMA nodes, or as many with a smaller mask value."""
    if len(a) == len(b):
        return mask_value(a) < mask_value(b)
    return len(a) < len(b)


def _quoted(hints: Sequence[Hint]) -> tuple[str, str]:
    """The preferred masks and all masks of a hint list, as a refusal writes them."""
    usable = [h for h in hints if not h.unsatisfied]
    preferred = " ".join(mask_str(h.mask) for h in usable if h.preferred)
    return preferred, " ".join(mask_str(h.mask) for h in usable)


Providers = Sequence[Mapping[str, Sequence[Hint] | None]]


def filter_provider_hints(providers: Providers) -> tuple[list[list[Hint]], list[str]]:
    """filterProvidersHints: (hint lists, Unsatisfied reasons).

    A provider without hints, or a resource mapped to None, means "no preference"; a
    resource mapped to an empty list cannot be satisfied anywhere.
    """
    lists, reasons = [], []
    for provider in providers:
        if not provider:
            lists.append([Hint(None, True)])
            continue
        for name in sorted(provider):
            hints = provider[name]
            if hints is None:
                lists.append([Hint(None, True)])
            elif not hints:
                lists.append([Hint(None, False, unsatisfied=True)])
                reasons.append(f"Unsatisfied NUMA {name}")
            else:
                lists.append(list(hints))
    return lists, reasons


def provider_summary(providers: Providers) -> list[str]:
    """The per-resource summaries a refusal quotes (built only when one is written).

    Resources published alike have equal hint lists (the same hints, so comparing them
    is cheap): their masks are written out once."""
    summaries = []
    last: tuple[Sequence[Hint], tuple[str, str]] | None = None
    for provider in providers:
        for name, hints in provider.items():
            if not hints:
                continue
            if last is None or last[0] != hints:
                last = (hints, _quoted(hints))
            preferred, possible = last[1]
            summaries.append(f"{name} prefer [{preferred}] among [{possible}]")
    return sorted(summaries)


def merge_permutation(numa_nodes: Sequence[int], permutation: Sequence[Hint]) -> Hint:
    """mergePermutation: AND of the masks; Unsatisfied when the AND lost NUMA nodes."""
    preferred, satisfied, widest = True, True, 0
    masks = [h.mask for h in permutation if h.mask is not None]
    merged = frozenset(numa_nodes)
    for hint in permutation:
        if hint.mask is not None:
            preferred = preferred and hint.mask == masks[0]
            widest = max(widest, len(hint.mask))
            merged &= hint.mask
        preferred = preferred and hint.preferred
        satisfied = satisfied and not hint.unsatisfied
    satisfied = (not masks or widest == len(merged)) and satisfied
    return Hint(merged, preferred, 0, not satisfied)


def exclusive_ok(hint: Hint, exclusive: str, statuses: Sequence[str]) -> bool:
    """checkExclusivePolicy for singleNUMANodeExclusive=Required."""
    if hint.mask is None:
        return False
    if exclusive != "Required":
        return True

    def status(numa: int) -> str:
        return statuses[numa] if 0 <= numa < len(statuses) else "idle"

    if len(hint.mask) > 1:
        return all(status(n) != "single" for n in hint.mask)
    return status(min(hint.mask)) != "shared"


def merge_filtered(
    numa_nodes: Sequence[int],
    lists: Sequence[Sequence[Hint]],
    exclusive: str,
    statuses: Sequence[str],
) -> Hint:
    """mergeFilteredHints: preferred first, then narrower, then (same width) higher score.

    Every resource usually gets the same hint list (one per NUMA mask). Then only
    permutations that repeat one hint can be preferred, and once a preferred one is
    best no other kind can replace it: folding over those "diagonal" permutations
    alone gives the same answer whenever one of them is preferred, in |L| steps
    instead of |L|^k. Otherwise every permutation is folded, as upstream does.
    """
    if _same_distinct_masks(lists):
        best = fold_diagonal(numa_nodes, lists[0], len(lists), exclusive, statuses)
        if best.preferred:
            return best
    return fold_permutations(numa_nodes, product(*lists), exclusive, statuses)


def _same_distinct_masks(lists: Sequence[Sequence[Hint]]) -> bool:
    """One list repeated, whose hints all have a mask and no two the same mask."""
    if not lists or any(hints != lists[0] for hints in lists[1:]):
        return False
    masks = [h.mask for h in lists[0]]
    return None not in masks and len(set(masks)) == len(masks)


def fold_diagonal(
    numa_nodes: Sequence[int],
    hints: Sequence[Hint],
    width: int,
    exclusive: str,
    statuses: Sequence[str],
) -> Hint:
    """`fold_permutations` over the permutations repeating one hint `width` (>= 1) times,
    each merged directly: the AND of one mask with itself is that mask (within the
    node's NUMA nodes), preferred as the hint is, unsatisfied when the AND lost NUMA
    nodes or the hint is; its score is the hint's, once per resource, when the AND kept
    the whole mask. Hints must have masks (`_same_distinct_masks`)."""
    everything = frozenset(numa_nodes)
    best = Hint(everything, False)
    for hint in hints:
        mask = everything & (hint.mask or frozenset())
        if not mask:
            continue
        whole = hint.mask == mask
        unsatisfied = not whole or hint.unsatisfied
        merged = Hint(mask, hint.preferred, hint.score * width if whole else 0, unsatisfied)
        if merged.preferred and not exclusive_ok(merged, exclusive, statuses):
            merged = Hint(mask, False, merged.score, unsatisfied)
        best = _chosen(best, merged)
    return best


def fold_permutations(
    numa_nodes: Sequence[int],
    permutations: Iterable[Sequence[Hint]],
    exclusive: str,
    statuses: Sequence[str],
) -> Hint:
    """The loop of mergeFilteredHints over the given permutations, in their order."""
    best = Hint(frozenset(numa_nodes), False)
    for permutation in permutations:
        merged = merge_permutation(numa_nodes, permutation)
        if not merged.mask:
            continue
        preferred = merged.preferred and exclusive_ok(merged, exclusive, statuses)
        score = sum(h.score for h in permutation if h.mask is not None and h.mask == merged.mask)
        merged = Hint(merged.mask, preferred, score, merged.unsatisfied)
        best = _chosen(best, merged)
    return best


def _chosen(best: Hint, candidate: Hint) -> Hint:
    """mergeFilteredHints' pick: a preferred hint beats a non-preferred one, then `_better`."""
    if candidate.preferred != best.preferred:
        return candidate if candidate.preferred else best
    return candidate if _better(candidate, best) else best


def _better(candidate: Hint, best: Hint) -> bool:
    """Same preference: narrower wins; as wide wins only with a higher score."""
    new, old = candidate.mask or frozenset(), best.mask or frozenset()
    if narrower(new, old):
        return True
    return len(new) == len(old) and candidate.score > best.score


@dataclass(frozen=True, slots=True)
class MergeResult:
    hint: Hint
    admit: bool
    reasons: tuple[str, ...] = ()


def merge(
    policy: str,
    numa_nodes: Sequence[int],
    providers: Providers,
    exclusive: str = "",
    statuses: Sequence[str] = (),
) -> MergeResult:
    """Policy.Merge for BestEffort, Restricted and SingleNUMANode (one map per provider)."""
    lists, reasons = filter_provider_hints(providers)
    everything = frozenset(numa_nodes)
    if policy == NUMATopologyPolicy.SINGLE_NUMA_NODE:
        if reasons:
            return MergeResult(Hint(None, False), False, tuple(reasons))
        single = [
            [h for h in hl if h.preferred and (h.mask is None or len(h.mask) == 1)] for hl in lists
        ]
        best = merge_filtered(numa_nodes, single, exclusive, statuses)
        if best.mask == everything:
            best = Hint(None, best.preferred)
        if best.preferred:
            return MergeResult(best, True)
        cause = f"Unaligned NUMA Hint cause {','.join(provider_summary(providers))}"
        return MergeResult(best, False, (cause,))
    if policy == NUMATopologyPolicy.RESTRICTED:
        if reasons:
            return MergeResult(Hint(everything, False), False, tuple(reasons))
        best = merge_filtered(numa_nodes, lists, exclusive, statuses)
        if best.preferred:
            return MergeResult(best, True)
        cause = f"Unaligned NUMA Hint cause {' & '.join(provider_summary(providers))}"
        return MergeResult(best, False, (cause,))
    best = merge_filtered(numa_nodes, lists, exclusive, statuses)
    if best.unsatisfied:
        best = Hint(everything, best.preferred)
    return MergeResult(best, True)
