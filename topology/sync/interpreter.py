"""Two interpreter settings that a session's full lists change while they run.

Both are process-wide, and both are put back when the lists end. Two sessions of one
process whose lists overlap may put one back early for the other, which costs that
one time, never memory or correctness.

- The cyclic garbage collector is paused. A cold resync decodes and parses millions of
  containers (JSON dicts and lists, records); many live a while (the pages in flight),
  so the collector's oldest generation fills up again and again, and each of its passes
  walks every object of the process: Django, the kubernetes client's model classes, the
  pages. On the sync benchmark (1,000 nodes, 20,000 pods) those passes took a quarter
  of the sync's CPU time. What a list allocates forms no reference cycle (JSON trees,
  frozen records, row tuples), so reference counting frees it as each page is written;
  a cycle made meanwhile (a caught exception and its traceback) waits for the
  collector's next pass, after the lists.
- Threads switch after 1 ms rather than 5 ms. The fetching thread parses (pure Python,
  holding the GIL) while the writer waits for PostgreSQL. Each time the writer's answer
  arrives (20 waits a page of 500 pods, COPY buffers included) it must get the GIL back,
  and a thread that wants it waits a whole switch interval before the holder is asked
  to let go: at 5 ms that undid most of the overlap (a round trip of 0.2 ms took 3 to
  4 ms next to a busy thread). The benchmark's cold resync at 0.2 scale took a quarter
  less time at 1 ms.
"""

from __future__ import annotations

import gc
import sys
from collections.abc import Iterator
from contextlib import contextmanager

LIST_SWITCH_INTERVAL = 0.001  # seconds


@contextmanager
def tuned_for_full_lists() -> Iterator[None]:
    with cyclic_gc_paused(), thread_switch_interval(LIST_SWITCH_INTERVAL):
        yield


@contextmanager
def cyclic_gc_paused() -> Iterator[None]:
    """Pause the collector for the block; resume it after, unless it was off already."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


@contextmanager
def thread_switch_interval(seconds: float) -> Iterator[None]:
    """At most `seconds` between thread switches for the block (never a longer one than
    the process has), then the process's own interval again."""
    previous = sys.getswitchinterval()
    if previous <= seconds:
        yield
        return
    sys.setswitchinterval(seconds)
    try:
        yield
    finally:
        sys.setswitchinterval(previous)
