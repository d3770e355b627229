"""Work a response need not wait for, run once the response has gone.

Writing a new what-if answer to the shared cache (`answer_cache`) compresses about a
megabyte: a few milliseconds the user would wait for although the answer is already
known. During a request such work is kept and run when Django finishes the request
(`request_finished`: the WSGI server has sent the response and closes it). Outside a
request (a Celery task, a management command) it runs at once.

Work is kept per thread: a threaded server's requests do not run each other's. (Under
ASGI, sync views share a thread: work then runs when any of its requests finishes.)
Each job runs whatever the others do; a failing one is logged, never raised, so it
must be work whose loss costs nothing but time (a cache write).
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from typing import Any

from django.core.signals import request_finished, request_started

logger = logging.getLogger(__name__)

Job = Callable[[], None]
_pending = threading.local()


def after_response(job: Job) -> None:
    """Run `job` after the current response is sent; at once outside a request."""
    jobs: list[Job] | None = getattr(_pending, "jobs", None)
    if jobs is None:
        _run(job)
    else:
        jobs.append(job)


def _request_started(**_: Any) -> None:
    """Keep work from now on. Work still kept (a request on this thread that did not
    finish, or one served beside it on the same thread under ASGI) stays kept."""
    if getattr(_pending, "jobs", None) is None:
        _pending.jobs = []


def _request_finished(**_: Any) -> None:
    jobs: list[Job] | None = getattr(_pending, "jobs", None)
    _pending.jobs = None
    for job in jobs or ():
        _run(job)


def _run(job: Job) -> None:
    try:
        job()
    except Exception:  # noqa: BLE001 - deferred work is an optimisation only
        logger.exception("work after the response failed")


def connect() -> None:
    """Hook into Django's request signals (the app's `ready`)."""
    request_started.connect(_request_started, dispatch_uid="topolens-after-response-start")
    request_finished.connect(_request_finished, dispatch_uid="topolens-after-response-finish")
