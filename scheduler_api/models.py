"""API credentials and the state of what-if questions answered by Celery."""

from __future__ import annotations

import hashlib
import uuid

from django.conf import settings
from django.db import models
from django.utils import timezone

from scheduler_api.choices import TaskState
from topology.models import Cluster


class APIToken(models.Model):
    """A bearer token for automation. Only its SHA-256 digest is stored; the text is shown once."""

    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="api_tokens"
    )
    name = models.CharField(max_length=100, help_text="What it is for, e.g. 'CI pipeline'.")
    prefix = models.CharField(
        max_length=16, editable=False, help_text="The token's first characters, to recognise it."
    )
    digest = models.CharField(max_length=64, unique=True, editable=False)
    created_at = models.DateTimeField(auto_now_add=True)
    expires_at = models.DateTimeField(null=True, blank=True, help_text="Empty: never expires.")
    revoked_at = models.DateTimeField(null=True, blank=True, editable=False)
    last_used_at = models.DateTimeField(null=True, blank=True, editable=False)

    class Meta:
        verbose_name = "API token"
        ordering = ["-created_at"]

    def __str__(self) -> str:
        return f"{self.name} ({self.prefix}…)"

    @staticmethod
    def digest_of(plaintext: str) -> str:
        """How a token is stored. It holds 256 random bits, so a fast hash is enough."""
        return hashlib.sha256(plaintext.encode()).hexdigest()

    @property
    def is_expired(self) -> bool:
        return self.expires_at is not None and self.expires_at <= timezone.now()

    @property
    def is_revoked(self) -> bool:
        return self.revoked_at is not None


class WhatIfTask(models.Model):
    """A what-if question too large to answer within the request, and its answer.

    Kept in our own table rather than a Celery result backend, so that it works on
    every broker and the answer stays readable after the worker is gone.
    """

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="whatif_tasks"
    )
    cluster = models.ForeignKey(Cluster, on_delete=models.CASCADE, related_name="whatif_tasks")
    request = models.JSONField(help_text="the validated what-if request")
    track = models.BooleanField(
        default=False, help_text="follow the prediction up once answered (TrackedPrediction)"
    )
    prediction = models.ForeignKey(
        "topology.TrackedPrediction",
        on_delete=models.SET_NULL,
        null=True,
        blank=True,
        related_name="+",
        help_text="the prediction stored when a tracked task succeeded",
    )
    state = models.CharField(max_length=16, choices=TaskState.choices, default=TaskState.PENDING)
    result = models.JSONField(null=True, blank=True)
    error = models.JSONField(null=True, blank=True, help_text="{detail, errors} when it failed")
    created_at = models.DateTimeField(auto_now_add=True)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        verbose_name = "what-if task"
        ordering = ["-created_at"]
        permissions = [("run_whatif", "Can run what-if placements")]

    def __str__(self) -> str:
        return f"what-if {self.id} on {self.cluster_id} ({self.state})"
