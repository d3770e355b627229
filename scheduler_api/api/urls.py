"""/api/v1/: plural nouns, stable lookups (cluster name, then node name), no trailing slash."""

from __future__ import annotations

from django.urls import path, re_path
from rest_framework.routers import SimpleRouter

from scheduler_api.api import schema  # noqa: F401  registers the OpenAPI extensions
from scheduler_api.api.views.agreement import (
    AgreementPodListView,
    AgreementView,
    PredictionDetailView,
    PredictionListView,
)
from scheduler_api.api.views.apply import ApplyRecordViewSet, NodePolicyApplyView, QoSApplyView
from scheduler_api.api.views.base import api_not_found
from scheduler_api.api.views.clusters import ClusterViewSet
from scheduler_api.api.views.diagnosis import (
    DiagnosisListView,
    FindingListView,
    PodDiagnosisView,
)
from scheduler_api.api.views.export import ExportView
from scheduler_api.api.views.history import HistoryView
from scheduler_api.api.views.mirror import (
    NodePolicyViewSet,
    NodeReservationViewSet,
    PodDetailView,
    PodListView,
    ReservationViewSet,
)
from scheduler_api.api.views.nodes import NodeTopologyView, NodeViewSet
from scheduler_api.api.views.qos import NodeQoSListView, StoredQoSView
from scheduler_api.api.views.tasks import WhatIfTaskView
from scheduler_api.api.views.whatif import WhatIfView

app_name = "api"
CLUSTER = "clusters/<slug:cluster>"
CLUSTER_RE = r"clusters/(?P<cluster>[-a-zA-Z0-9_]+)"

router = SimpleRouter(trailing_slash=False)
router.register("clusters", ClusterViewSet, basename="cluster")
router.register(f"{CLUSTER_RE}/nodes", NodeViewSet, basename="node")
router.register(f"{CLUSTER_RE}/reservations", ReservationViewSet, basename="reservation")
router.register(f"{CLUSTER_RE}/node-reservations", NodeReservationViewSet, "node-reservation")
router.register(f"{CLUSTER_RE}/policies", NodePolicyViewSet, basename="policy")
router.register(f"{CLUSTER_RE}/applies", ApplyRecordViewSet, basename="apply")

urlpatterns = [
    path(f"{CLUSTER}/nodes/<str:node>/topology", NodeTopologyView.as_view(), name="node-topology"),
    path(f"{CLUSTER}/pods", PodListView.as_view(), name="pod-list"),
    path(f"{CLUSTER}/pods/<str:namespace>/<str:name>", PodDetailView.as_view(), name="pod-detail"),
    path(
        f"{CLUSTER}/pods/<str:namespace>/<str:name>/diagnosis",
        PodDiagnosisView.as_view(),
        name="pod-diagnosis",
    ),
    path(f"{CLUSTER}/diagnoses", DiagnosisListView.as_view(), name="diagnosis-list"),
    path(f"{CLUSTER}/findings", FindingListView.as_view(), name="finding-list"),
    path(f"{CLUSTER}/agreement", AgreementView.as_view(), name="agreement"),
    path(f"{CLUSTER}/agreement/pods", AgreementPodListView.as_view(), name="agreement-pods"),
    path(f"{CLUSTER}/predictions", PredictionListView.as_view(), name="predictions"),
    path(
        f"{CLUSTER}/predictions/<int:prediction>",
        PredictionDetailView.as_view(),
        name="prediction",
    ),
    path(f"{CLUSTER}/history", HistoryView.as_view(), name="history"),
    path(f"{CLUSTER}/qos", StoredQoSView.as_view(), name="qos"),
    path(f"{CLUSTER}/qos/nodes", NodeQoSListView.as_view(), name="qos-nodes"),
    path(f"{CLUSTER}/whatif", WhatIfView.as_view(), name="whatif"),
    path(f"{CLUSTER}/export", ExportView.as_view(), name="export"),
    path("tasks/<uuid:task>", WhatIfTaskView.as_view(), name="whatif-task"),
    path(
        f"{CLUSTER}/policies/<str:node>/apply", NodePolicyApplyView.as_view(), name="policy-apply"
    ),
    path(f"{CLUSTER}/qos/apply", QoSApplyView.as_view(), name="qos-apply"),
    *router.urls,
    # Anything else under /api/v1/ is a JSON 404 in the one error shape, never Django's HTML.
    re_path(r"^[\s\S]*$", api_not_found),  # [\s\S], not ".": a newline is no way out
]
