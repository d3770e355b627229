"""Celery tasks: thin interfaces that take ids and call services."""

from __future__ import annotations

from celery import shared_task

from scheduler_api.services.whatif_tasks import whatif_task_run


@shared_task(name="scheduler_api.run_whatif")
def run_whatif_task(task_id: str) -> str:
    """Answer a stored what-if question; the answer goes to its WhatIfTask row."""
    return str(whatif_task_run(task_id=task_id).state)
