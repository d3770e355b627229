"""Background what-if tasks a user may read: their own."""

from __future__ import annotations

from typing import Any

from django.db.models import QuerySet

from scheduler_api.models import WhatIfTask


def whatif_tasks_of(user: Any) -> QuerySet[WhatIfTask]:
    return WhatIfTask.objects.filter(user=user).select_related("cluster")
