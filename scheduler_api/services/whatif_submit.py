"""Putting a large what-if question on the queue (the task runs `whatif_tasks`)."""

from __future__ import annotations

from functools import partial

from django.contrib.auth.models import AbstractBaseUser
from django.db import transaction

from scheduler_api.models import WhatIfTask
from scheduler_api.services.whatif import WhatIfQuestion
from scheduler_api.tasks import run_whatif_task
from topology.models import Cluster


@transaction.atomic
def whatif_task_submit(
    *, user: AbstractBaseUser, cluster: Cluster, question: WhatIfQuestion, track: bool = False
) -> WhatIfTask:
    """Store the question, and enqueue it once the row is committed (a worker can read it).
    `track`: the answer's prediction is remembered for follow-up when it is ready."""
    task = WhatIfTask.objects.create(
        user=user, cluster=cluster, request=question.as_json(), track=track
    )
    transaction.on_commit(partial(run_whatif_task.delay, str(task.pk)))
    return task
