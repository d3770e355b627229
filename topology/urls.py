from django.urls import path

from topology.views import (
    agreement,
    home,
    nodes,
    overview,
    problems,
    qos,
    reservations,
    sync,
    whatif,
)

app_name = "topology"
urlpatterns = [
    path("", home.home, name="home"),
    # Browsers ask for /favicon.ico on every page, the admin's login page included.
    path("favicon.ico", home.favicon),
    path("switch/", home.switch_cluster, name="switch"),
    path("sync/", sync.sync_health, name="sync"),
    path("c/<slug:cluster>/", overview.overview, name="overview"),
    path("c/<slug:cluster>/live.json", overview.overview_live, name="overview-live"),
    path("c/<slug:cluster>/nodes/<str:node>/", nodes.node_page, name="node"),
    path("c/<slug:cluster>/nodes/<str:node>/live.json", nodes.node_live, name="node-live"),
    path("c/<slug:cluster>/reservations/", reservations.reservation_list, name="reservations"),
    path(
        "c/<slug:cluster>/reservations/<str:name>/",
        reservations.reservation_page,
        name="reservation",
    ),
    path("c/<slug:cluster>/qos/", qos.qos, name="qos"),
    path("c/<slug:cluster>/problems/", problems.problems, name="problems"),
    path("c/<slug:cluster>/agreement/", agreement.agreement, name="agreement"),
    path(
        "c/<slug:cluster>/agreement/<str:namespace>/<str:name>/",
        agreement.agreement_pod,
        name="agreement-pod",
    ),
    path(
        "c/<slug:cluster>/pods/<str:namespace>/<str:name>/diagnosis/",
        problems.pod_diagnosis_page,
        name="pod-diagnosis",
    ),
    path("c/<slug:cluster>/whatif/", whatif.whatif, name="whatif"),
    path("c/<slug:cluster>/whatif/compare/", whatif.whatif_compare, name="whatif-compare"),
    path("c/<slug:cluster>/whatif/track/", whatif.whatif_track, name="whatif-track"),
]
