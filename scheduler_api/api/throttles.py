"""Per-user throttles for the expensive endpoints (what-if, export).

Counted by `topology.services.rate_limits` (atomic, in Django's cache: per process with
the default local-memory cache, shared by every process with Redis), the same counter
the dashboard's what-if takes from: one limit per user for the same action everywhere.
The rate is read when a request arrives, so settings overrides apply.
"""

from __future__ import annotations

from typing import Any

from rest_framework.throttling import BaseThrottle

from topology.services.rate_limits import take


class ScopedUserThrottle(BaseThrottle):
    scope = ""

    def allow_request(self, request: Any, view: Any) -> bool:
        user = request.user
        who = f"user-{user.pk}" if user and user.is_authenticated else self.get_ident(request)
        decision = take(self.scope, who)
        self._wait = decision.retry_after
        return decision.allowed

    def wait(self) -> float | None:
        return float(self._wait) if self._wait else None


class WhatIfThrottle(ScopedUserThrottle):
    scope = "whatif"


class ExportThrottle(ScopedUserThrottle):
    scope = "export"
