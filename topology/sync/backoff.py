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


def delay_for(exc: BaseException, backoff: Backoff) -> float:
    """The pause before retrying after `exc`: the backoff's next delay, or longer when the
    server said how long to wait (client-go's checkWait honours Retry-After on a 429 or a
    5xx), though never past the backoff's ceiling."""
    delay = backoff.next_delay()
    asked = retry_after_seconds(exc)
    return max(delay, min(asked, backoff.ceiling)) if asked is not None else delay


def retry_after_seconds(exc: BaseException) -> float | None:
    """The whole seconds of a 429's or 5xx's Retry-After header, if it has one."""
    if not isinstance(exc, ApiException) or not (exc.status == 429 or 500 <= exc.status < 600):
        return None
    value = _header(exc.headers, "Retry-After")
    return float(value) if value is not None and value.isascii() and value.isdigit() else None


def _header(headers: object, name: str) -> str | None:
    """A header by name, whatever the case (urllib3's headers, or a plain mapping)."""
    if not hasattr(headers, "items"):
        return None
    for key, value in headers.items():
        if str(key).lower() == name.lower():
            return str(value).strip()
    return None
