"""Rate limits counted atomically in Django's cache, shared by every surface.

A fixed window per (scope, user): the first request of a window creates its counter with
`cache.add` and every request takes one with `cache.incr`, which local memory and Redis
both do atomically, so concurrent requests never read the same count (DRF's throttles
read, then write: 136 of 300 concurrent what-ifs passed a 120/minute limit). With
CACHE_URL set to Redis every process counts in the same place. A window admits at most
its limit; as with any fixed window, two bursts either side of its edge may meet.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

from django.conf import settings
from django.core.cache import cache

PERIODS = {"s": 1, "sec": 1, "second": 1, "m": 60, "min": 60, "minute": 60}
PERIODS |= {"h": 3600, "hour": 3600, "d": 86400, "day": 86400}


@dataclass(frozen=True)
class Decision:
    allowed: bool
    retry_after: int  # seconds until the window ends (0 when allowed)


def parse_rate(rate: str) -> tuple[int, int]:
    """ "120/minute" → (120, 60)."""
    count, _, period = rate.partition("/")
    return int(count), PERIODS[period]


def take(scope: str, who: str) -> Decision:
    """Count one request of `who` in `scope` (a key of API_THROTTLE_RATES)."""
    limit, period = parse_rate(settings.API_THROTTLE_RATES[scope])
    now = time.time()
    window = int(now // period)
    key = f"rate:{scope}:{who}:{window}"
    cache.add(key, 0, timeout=period + 1)
    try:
        count = cache.incr(key)
    except ValueError:  # expired between add and incr: this request opens the window
        cache.add(key, 1, timeout=period + 1)
        count = 1
    if count <= limit:
        return Decision(True, 0)
    return Decision(False, max(1, int((window + 1) * period - now)))
