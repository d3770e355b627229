"""Work kept until the response is sent (`after_response`), and run at once elsewhere."""

from __future__ import annotations

import logging

import pytest
from django.core.signals import request_finished, request_started

from topology.services.whatif.after_response import after_response


@pytest.fixture
def in_a_request(request_signals):
    request_started.send(sender=None)
    yield
    request_finished.send(sender=None)


def test_outside_a_request_the_work_runs_at_once() -> None:
    done: list[str] = []
    after_response(lambda: done.append("now"))
    assert done == ["now"]


def test_during_a_request_the_work_waits_for_the_response(in_a_request) -> None:
    done: list[str] = []
    after_response(lambda: done.append("first"))
    after_response(lambda: done.append("second"))
    assert done == []
    request_finished.send(sender=None)
    assert done == ["first", "second"]
    request_finished.send(sender=None)  # a request's work runs once
    assert done == ["first", "second"]


def test_a_failing_job_is_logged_and_the_others_still_run(in_a_request, caplog) -> None:
    done: list[str] = []

    def broken() -> None:
        raise RuntimeError("cache down")

    after_response(broken)
    after_response(lambda: done.append("after"))
    with caplog.at_level(logging.ERROR, logger="topology.services.whatif.after_response"):
        request_finished.send(sender=None)
    assert done == ["after"]
    assert "work after the response failed" in caplog.text


def test_work_of_a_request_that_has_not_finished_is_kept_when_another_starts(
    in_a_request,
) -> None:
    done: list[str] = []
    after_response(lambda: done.append("first request's"))
    request_started.send(sender=None)  # another request on this thread (ASGI)
    after_response(lambda: done.append("second request's"))
    request_finished.send(sender=None)
    assert done == ["first request's", "second request's"]
