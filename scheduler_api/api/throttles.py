"""Per-user throttles for the expensive endpoints (what-if, export).

The rate is read when a request arrives, not when this module is imported, so that
settings overrides apply (DRF's own classes freeze the rates at import).
Counters live in Django's cache: per process with the default local-memory cache.
"""

from __future__ import annotations

from rest_framework.settings import api_settings
from rest_framework.throttling import UserRateThrottle


class ScopedUserThrottle(UserRateThrottle):
    def get_rate(self) -> str | None:
        return api_settings.DEFAULT_THROTTLE_RATES.get(self.scope)


class WhatIfThrottle(ScopedUserThrottle):
    scope = "whatif"


class ExportThrottle(ScopedUserThrottle):
    scope = "export"
