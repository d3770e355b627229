"""Backoff grows exponentially, with jitter, up to a ceiling; which failures deserve it."""

from __future__ import annotations

import random

import pytest
from kubernetes.client.exceptions import ApiException
from urllib3.exceptions import NewConnectionError, ProtocolError, ReadTimeoutError

from topology.sync.backoff import Backoff, delay_for, is_transient, retry_after_seconds
from topology.sync.errors import describe
from topology.sync.watcher import status_error


def test_delays_double_within_jitter_until_the_ceiling():
    backoff = Backoff(0.5, 8.0, random.Random(1))
    delays = [backoff.next_delay() for _ in range(10)]
    for attempt, delay in enumerate(delays):
        bound = min(8.0, 0.5 * 2**attempt)
        assert bound / 2 <= delay <= bound
    assert max(delays) <= 8.0 and delays[-1] >= 4.0


def test_jitter_spreads_workers_that_failed_together():
    first = [Backoff(1, 60, random.Random(seed)).next_delay() for seed in range(20)]
    assert len({round(d, 6) for d in first}) == 20


def test_reset_starts_over():
    backoff = Backoff(0.1, 10)
    for _ in range(6):
        backoff.next_delay()
    backoff.reset()
    assert backoff.next_delay() <= 0.1


def test_a_ceiling_below_the_first_delay_is_refused():
    with pytest.raises(ValueError):
        Backoff(2, 1)


@pytest.mark.parametrize(
    ("error", "transient"),
    [
        (ApiException(status=503), True),
        (ApiException(status=500), True),
        (ApiException(status=429), True),
        (ApiException(status=403), False),
        (ApiException(status=410), False),
        (ProtocolError("Connection broken"), True),
        (ReadTimeoutError(None, "/", "read timed out"), True),
        (ConnectionRefusedError(), True),
        (ValueError("bad json"), False),
    ],
)
def test_what_is_worth_retrying(error, transient):
    assert is_transient(error) is transient


def test_errors_are_described_without_headers_or_bodies():
    exc = ApiException(status=403, reason="Forbidden")
    exc.body = '{"message": "nodes is forbidden", "details": "x"}'
    exc.headers = {"Authorization": "Bearer leaked"}
    assert describe(exc) == "HTTP 403 Forbidden: nodes is forbidden"
    refused = NewConnectionError(None, "Failed to establish a new connection to 10.0.0.1")
    assert describe(refused) == "cannot connect to the API server"


def _asking(status: int, retry_after: str) -> ApiException:
    error = ApiException(status=status)
    error.headers = {"retry-after": retry_after}  # header names are case-insensitive
    return error


@pytest.mark.parametrize(
    ("error", "at_least", "at_most"),
    [
        pytest.param(_asking(429, "7"), 7.0, 7.0, id="429-retry-after-honoured"),
        pytest.param(_asking(503, "7"), 7.0, 7.0, id="5xx-retry-after-honoured"),
        pytest.param(_asking(429, "600"), 30.0, 30.0, id="capped-at-the-ceiling"),
        pytest.param(_asking(429, "soon"), 0.25, 0.5, id="not-whole-seconds-ignored"),
        pytest.param(_asking(404, "7"), 0.25, 0.5, id="only-429-and-5xx"),
        pytest.param(ConnectionError(), 0.25, 0.5, id="no-header-at-all"),
    ],
)
def test_a_server_that_says_how_long_to_wait_is_waited_for(error, at_least, at_most):
    delay = delay_for(error, Backoff(0.5, 30.0, random.Random(3)))
    assert at_least <= delay <= at_most


def test_a_watch_error_status_carries_its_retry_after_seconds():
    status = {"code": 429, "reason": "TooManyRequests", "details": {"retryAfterSeconds": 5}}
    error = status_error(status)
    assert error.status == 429 and retry_after_seconds(error) == 5.0
    assert retry_after_seconds(status_error({"code": 500})) is None
