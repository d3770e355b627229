"""tasks/{id}: a background what-if's state and, when done, its answer (its owner only)."""

from __future__ import annotations

from typing import Any

from drf_spectacular.utils import extend_schema
from rest_framework import generics

from scheduler_api.api.renderers import FastJSONRenderer
from scheduler_api.api.serializers.tasks import WhatIfTaskSerializer
from scheduler_api.models import WhatIfTask
from scheduler_api.selectors.tasks import whatif_tasks_of


@extend_schema(summary="A background what-if", tags=["what-if"])
class WhatIfTaskView(generics.RetrieveAPIView):
    queryset = WhatIfTask.objects.all()
    required_permissions = {"GET": ("scheduler_api.run_whatif",)}
    serializer_class = WhatIfTaskSerializer
    lookup_url_kwarg = "task"
    renderer_classes = [FastJSONRenderer]  # a done task carries a whole what-if answer
    filter_backends: list[Any] = []

    def get_queryset(self) -> Any:
        if getattr(self, "swagger_fake_view", False):
            return WhatIfTask.objects.none()
        return whatif_tasks_of(self.request.user)
