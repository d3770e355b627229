"""Celery tasks: thin interfaces that take ids and call services."""

from __future__ import annotations

from datetime import timedelta

from celery import shared_task
from django.conf import settings

from scheduler_api.services.whatif_tasks import whatif_task_run, whatif_tasks_expire


@shared_task(name="scheduler_api.run_whatif")
def run_whatif_task(task_id: str) -> str:
    """Answer a stored what-if question; the answer goes to its WhatIfTask row."""
    return str(whatif_task_run(task_id=task_id).state)


@shared_task(name="scheduler_api.expire_whatif_tasks")
def expire_whatif_tasks() -> int:
    """Housekeeping: finished what-if tasks older than WHATIF_TASK_RETENTION_SECONDS go."""
    return whatif_tasks_expire(older_than=timedelta(seconds=settings.WHATIF_TASK_RETENTION_SECONDS))
