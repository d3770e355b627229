"""clusters/{cluster}/whatif: answer at once (200), or in the background (202 + Location)."""

from __future__ import annotations

from typing import Any

from django.urls import reverse
from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import generics, status
from rest_framework.exceptions import ValidationError
from rest_framework.request import Request
from rest_framework.response import Response

from scheduler_api.api.examples import WHATIF_EXAMPLES
from scheduler_api.api.renderers import FastJSONRenderer
from scheduler_api.api.serializers.common import ErrorSerializer
from scheduler_api.api.serializers.tasks import WhatIfTaskSerializer
from scheduler_api.api.serializers.whatif import WhatIfRequestSerializer, WhatIfResultSerializer
from scheduler_api.api.throttles import WhatIfThrottle
from scheduler_api.api.views.base import CLUSTER_PARAMETER, ClusterScopedMixin
from scheduler_api.services.whatif import (
    WhatIfQuestion,
    whatif_answer,
    whatif_question,
    whatif_runs_in_background,
    whatif_track,
)
from scheduler_api.services.whatif_submit import whatif_task_submit
from topology.access import PERMISSIONS, Action
from topology.models import Cluster
from topology.services.observability.metrics import WHATIF_REQUESTS, WHATIF_SECONDS
from topology.services.whatif.service import WhatIfInputError


class WhatIfView(ClusterScopedMixin, generics.GenericAPIView):
    queryset = Cluster.objects.all()
    required_permissions = {"POST": PERMISSIONS[Action.RUN_WHATIF]}  # as the dashboard
    serializer_class = WhatIfRequestSerializer
    throttle_classes = [WhatIfThrottle]
    renderer_classes = [FastJSONRenderer]  # thousands of verdicts per answer
    pagination_class = None
    filter_backends: list[Any] = []

    @extend_schema(
        summary="Where would this pod land?",
        tags=["what-if"],
        parameters=[CLUSTER_PARAMETER],
        request=WhatIfRequestSerializer,
        responses={
            200: OpenApiResponse(WhatIfResultSerializer, "The answer, fitting or not."),
            202: OpenApiResponse(
                WhatIfTaskSerializer,
                "Runs in the background; poll the task named by the Location header.",
            ),
            429: OpenApiResponse(ErrorSerializer, "Too many what-ifs; retry after Retry-After."),
        },
        examples=WHATIF_EXAMPLES,
    )
    def post(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        serializer = self.get_serializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        try:
            question = whatif_question(serializer.validated_data)
            track = serializer.validated_data["track"]
            if whatif_runs_in_background(question):
                return self._accepted(question, track=track)
            with WHATIF_SECONDS.labels("api").time():
                answer = whatif_answer(cluster=self.cluster, question=question, fragments=True)
            WHATIF_REQUESTS.labels("api").inc()
            if track:
                answer = whatif_track(
                    cluster=self.cluster, question=question, answer=answer,
                    user=self.request.user, source="api",
                )  # fmt: skip
            return Response(answer)  # rendered by orjson, which writes the fragments as is
        except WhatIfInputError as error:
            raise ValidationError(error.field_errors) from error

    def _accepted(self, question: WhatIfQuestion, *, track: bool) -> Response:
        task = whatif_task_submit(
            user=self.request.user, cluster=self.cluster, question=question, track=track
        )
        location = reverse("api:whatif-task", kwargs={"task": task.pk})
        return Response(
            WhatIfTaskSerializer(task).data,
            status=status.HTTP_202_ACCEPTED,
            headers={"Location": location},
        )
