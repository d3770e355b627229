"""What-if questions answered in the background: the task row's life, pending to finished."""

from __future__ import annotations

import logging
import uuid
from datetime import timedelta

from django.db import transaction
from django.utils import timezone

from scheduler_api.choices import TaskState
from scheduler_api.errors import INVALID_INPUT, error_body
from scheduler_api.models import WhatIfTask
from scheduler_api.services.whatif import WhatIfQuestion, whatif_answer
from topology.services.audit.predictions import record_prediction, tracked_json
from topology.services.whatif.service import WhatIfInputError

logger = logging.getLogger(__name__)


def whatif_task_run(*, task_id: uuid.UUID | str) -> WhatIfTask:
    """Run a pending task once: a second delivery of the same message changes nothing."""
    with transaction.atomic():
        task = WhatIfTask.objects.select_for_update().select_related("cluster").get(pk=task_id)
        if task.state != TaskState.PENDING:
            return task
        task.state, task.started_at = TaskState.RUNNING, timezone.now()
        task.save(update_fields=["state", "started_at"])
    try:
        question = WhatIfQuestion.from_json(task.request)
        result = whatif_answer(cluster=task.cluster, question=question)
        if task.track:
            task.prediction = record_prediction(
                cluster=task.cluster, question=question, answer=result, user=task.user,
                source="api",
            )  # fmt: skip
            if not question.compares_schedulers:  # a comparison maps schedulers only
                result = {**result, "tracked": tracked_json(task.prediction)}
    except WhatIfInputError as error:
        return _finish(task, TaskState.FAILED, error=error_body(INVALID_INPUT, error.field_errors))
    except Exception:
        logger.exception("what-if task %s failed", task.pk)
        body = error_body("The what-if failed inside Topolens; the error is logged.", {})
        return _finish(task, TaskState.FAILED, error=body)
    return _finish(task, TaskState.SUCCEEDED, result=result)


def _finish(
    task: WhatIfTask,
    state: str,
    *,
    result: dict[str, object] | None = None,
    error: dict[str, object] | None = None,
) -> WhatIfTask:
    task.state, task.result, task.error = state, result, error
    task.finished_at = timezone.now()
    task.save(update_fields=["state", "result", "error", "finished_at", "prediction"])
    return task


def whatif_tasks_expire(*, older_than: timedelta) -> int:
    """Delete finished what-if tasks (and their answers) older than `older_than`; a task
    still pending or running is kept whatever its age. Returns how many went."""
    cutoff = timezone.now() - older_than
    finished = [TaskState.SUCCEEDED, TaskState.FAILED]
    deleted, _ = WhatIfTask.objects.filter(state__in=finished, created_at__lt=cutoff).delete()
    return deleted
