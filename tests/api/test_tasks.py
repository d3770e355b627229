"""tasks/{id}: a background what-if, readable by its owner only."""

from __future__ import annotations

from typing import Any

import pytest
from rest_framework.test import APIClient

from scheduler_api.models import WhatIfTask
from topology.models import Cluster

pytestmark = pytest.mark.django_db


@pytest.fixture
def task(user_for: Any, cluster: Cluster) -> WhatIfTask:
    return WhatIfTask.objects.create(
        user=user_for("operator"), cluster=cluster, request={"scheduler": "auto"}
    )


def test_the_owner_reads_the_task(operator: APIClient, task: WhatIfTask) -> None:
    body = operator.get(f"/api/v1/tasks/{task.pk}").json()
    assert body["id"] == str(task.pk) and body["cluster"] == "prod"
    assert body["state"] == "pending" and body["result"] is None


def test_another_users_task_is_404(admin: APIClient, task: WhatIfTask) -> None:
    assert admin.get(f"/api/v1/tasks/{task.pk}").status_code == 404


@pytest.mark.parametrize(
    ("persona", "status"), [("viewer", 403), ("outsider", 403), ("anonymous", 401)]
)
def test_roles_without_what_if_cannot_read_tasks(
    client_for: Any, task: WhatIfTask, persona: str, status: int
) -> None:
    assert client_for(persona).get(f"/api/v1/tasks/{task.pk}").status_code == status


def test_an_unknown_task_is_404(operator: APIClient) -> None:
    assert operator.get("/api/v1/tasks/00000000-0000-0000-0000-000000000000").status_code == 404


def test_finished_tasks_expire_and_running_ones_stay(trio, user_for, settings) -> None:
    """Issue 28: finished what-if tasks (a 103 MB result among them) were never deleted."""
    from datetime import timedelta

    from django.utils import timezone

    from scheduler_api.choices import TaskState
    from scheduler_api.models import WhatIfTask
    from scheduler_api.tasks import expire_whatif_tasks
    from topology.services.sync.schedules import EXPIRE_TASKS_TASK, wanted_schedules

    settings.WHATIF_TASK_RETENTION_SECONDS = 3600
    owner = user_for("operator")
    old = timezone.now() - timedelta(hours=2)
    for state in (TaskState.SUCCEEDED, TaskState.FAILED, TaskState.RUNNING, TaskState.PENDING):
        task = WhatIfTask.objects.create(user=owner, cluster=trio, request={}, state=state)
        WhatIfTask.objects.filter(pk=task.pk).update(created_at=old)
    fresh = WhatIfTask.objects.create(user=owner, cluster=trio, request={}, state="succeeded")
    assert expire_whatif_tasks() == 2
    kept = set(WhatIfTask.objects.values_list("state", flat=True))
    assert kept == {TaskState.RUNNING, TaskState.PENDING, TaskState.SUCCEEDED}
    assert WhatIfTask.objects.filter(pk=fresh.pk).exists()
    tasks = {w.task for w in wanted_schedules(resync_seconds=60, figures_seconds=60)}
    assert EXPIRE_TASKS_TASK in tasks  # beat runs it
