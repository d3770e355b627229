"""How a fast path says "I cannot decide here": one vocabulary for the whole engine.

A fast path either answers exactly what its reference would, or says it cannot, and the
caller asks the reference instead. It says so in one of three forms, by what it returns:

- a single answer: `None` (a count, a verdict);
- an array of answers: `UNDECIDED` in the rows it cannot decide (counts), or a
  boolean mask of the rows it did decide (named `decided`; scheduler-plugins' bulk
  verdicts name the other side, the rows left to the reference, `exact`);
- from deep inside a walk: `raise Undecided`, caught where the fast path returns.

`UNLIMITED` is not a refusal to decide: it is the answer "no limit" of a copy count.
"""

from __future__ import annotations

__all__ = ["UNDECIDED", "UNLIMITED", "Undecided"]

UNLIMITED = -1  # a count of copies with no limit (a NUMA filter that never runs short)
UNDECIDED = -2  # in an array of counts: this row is left to the reference


class Undecided(Exception):
    """Raised inside a fast path that cannot follow the reference any further."""
