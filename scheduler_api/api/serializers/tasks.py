"""A what-if answered in the background: its state and, when done, the same answer."""

from __future__ import annotations

from typing import Any

from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from scheduler_api.api.serializers.common import ErrorSerializer
from scheduler_api.api.serializers.whatif import TrackedSerializer, WhatIfResultSerializer
from scheduler_api.models import WhatIfTask
from scheduler_api.services.whatif import COMPARE_ALL
from topology.services.audit.predictions import tracked_json


class WhatIfTaskSerializer(serializers.ModelSerializer):
    cluster = serializers.CharField(source="cluster.name")
    result = serializers.SerializerMethodField()
    comparison = serializers.SerializerMethodField()
    tracked = serializers.SerializerMethodField()
    error = ErrorSerializer(allow_null=True, help_text="set when the task failed")

    class Meta:
        model = WhatIfTask
        fields = [
            "id",
            "cluster",
            "state",
            "created_at",
            "started_at",
            "finished_at",
            "result",
            "comparison",
            "tracked",
            "error",
        ]

    @extend_schema_field(WhatIfResultSerializer(allow_null=True))
    def get_result(self, task: WhatIfTask) -> dict[str, Any] | None:
        """The answer, when the task succeeded and asked one scheduler."""
        return None if _compares(task) else task.result

    @extend_schema_field(serializers.DictField(child=WhatIfResultSerializer(), allow_null=True))
    def get_comparison(self, task: WhatIfTask) -> dict[str, Any] | None:
        """Scheduler → answer, when the task succeeded and compared every scheduler."""
        return task.result if _compares(task) else None

    @extend_schema_field(TrackedSerializer(allow_null=True))
    def get_tracked(self, task: WhatIfTask) -> dict[str, Any] | None:
        """The stored prediction, when the task was asked with `track: true` and succeeded."""
        return tracked_json(task.prediction) if task.prediction is not None else None


def _compares(task: WhatIfTask) -> bool:
    return (task.request or {}).get("scheduler") == COMPARE_ALL
