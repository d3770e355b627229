"""Exponential backoff with jitter and a ceiling, and which failures deserve it."""

from __future__ import annotations

import random

from kubernetes.client.exceptions import ApiException
from urllib3.exceptions import HTTPError as Urllib3Error

# 429 asks to slow down; 5xx are the server's trouble and usually pass.
_RETRYABLE_STATUS = frozenset({429, 500, 502, 503, 504})


class Backoff:
    """Delay n is uniform in [b/2, b] with b = min(ceiling, initial · 2ⁿ).

    The jitter keeps many workers that failed together from retrying together; the
    lower half-bound keeps the delay growing, so a dead server is not hammered.
    """

    def __init__(self, initial: float, ceiling: float, rng: random.Random | None = None) -> None:
        if initial <= 0 or ceiling < initial:
            raise ValueError("backoff needs 0 < initial <= ceiling")
        self.initial = initial
        self.ceiling = ceiling
        self.attempts = 0
        self._rng = rng or random.Random()

    def next_delay(self) -> float:
        bound = min(self.ceiling, self.initial * 2 ** min(self.attempts, 62))
        self.attempts += 1
        return self._rng.uniform(bound / 2, bound)

    def reset(self) -> None:
        self.attempts = 0


def is_transient(exc: BaseException) -> bool:
    """Connection trouble, timeouts and 5xx/429: worth retrying after a pause."""
    if isinstance(exc, ApiException):
        return exc.status in _RETRYABLE_STATUS or exc.status == 0
    return isinstance(exc, Urllib3Error | ConnectionError | TimeoutError)
