"""Enumerations of the API app: roles and task states, value and label in one place."""

from __future__ import annotations

from django.db import models


class Role(models.TextChoices):
    """The three Django groups the API knows (created by migration 0002_roles)."""

    VIEWER = "viewer", "Viewer: reads everything except credentials"
    OPERATOR = "operator", "Operator: also runs what-if and edits desired policies"
    ADMIN = "admin", "Admin: also applies policies and manages clusters"


class TaskState(models.TextChoices):
    PENDING = "pending", "Pending"
    RUNNING = "running", "Running"
    SUCCEEDED = "succeeded", "Succeeded"
    FAILED = "failed", "Failed"
