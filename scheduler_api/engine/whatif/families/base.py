"""What a scheduler family offers the what-if: the `Family` record and its `Columns`."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

from scheduler_api.engine.model.results import PlacementResult
from scheduler_api.engine.schedulerplugins.fast.vector import Bools, Ints
from scheduler_api.engine.whatif.systems import Scheduler

if TYPE_CHECKING:
    from scheduler_api.engine.whatif.judge import Judgement

__all__ = ["Columns", "Family", "NodeRunner", "Unchanging"]

NodeRunner = Callable[..., PlacementResult]


class Columns(Protocol):
    """One family's verdicts on its rows of one judgement, read off the index's columns."""

    def settle(self, judgement: Judgement, rows: Bools) -> Bools:
        """Decide what the columns can of `rows` (the family's rows that passed the shared
        filters), writing the verdicts into `judgement`; the rows decided. The judgement
        asks the reference for every row no family decided."""
        ...

    def counts(
        self, judgement: Judgement, counts: Ints, limit: int, cap: Callable[[], Ints]
    ) -> Ints:
        """`counts` with the copies (up to `limit`) of the rows the columns count filled
        in, within `cap()`: the shared filters' count per row. Other rows as they are."""
        ...

    def forget(self, row: int) -> None:
        """`row` was judged again on its own (its node changed): nothing kept of it holds."""
        ...

    def copy(self) -> Columns:
        """A copy a working copy of the judgement may change."""
        ...


class Unchanging:
    """Columns whose state no bound replica changes: nothing to forget, nothing to copy."""

    def forget(self, row: int) -> None:
        return None

    def copy(self) -> Columns:
        return self  # type: ignore[return-value]


@dataclass(frozen=True, slots=True)
class Family:
    """What one scheduler family offers the what-if (see the module docstring)."""

    system: Scheduler
    evaluate: NodeRunner
    allocate: NodeRunner
    evaluate_fast: NodeRunner
    allocate_fast: NodeRunner
    columns: Callable[[int], Columns]  # fresh columns for a judgement of so many rows
    count_copies: Callable[..., int | None]
    picks_cpus: bool  # its allocation is more than its verdict (a cpuset, annotations)

    def runner(self, *, allocate: bool, fast: bool) -> NodeRunner:
        if fast:
            return self.allocate_fast if allocate else self.evaluate_fast
        return self.allocate if allocate else self.evaluate
