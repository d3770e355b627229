from django.contrib import admin
from django.contrib.auth.views import LoginView, LogoutView
from django.urls import include, path
from drf_spectacular.views import SpectacularAPIView, SpectacularRedocView, SpectacularSwaggerView

from scheduler_api.api.views.metrics import MetricsView
from topology.access import RoleAuthenticationForm
from webapp.offline import same_host_only

urlpatterns = [
    # the dashboard's own login, for every account with a role (admin's is for staff)
    path(
        "login/",
        LoginView.as_view(
            authentication_form=RoleAuthenticationForm, redirect_authenticated_user=True
        ),
        name="login",
    ),
    path("logout/", LogoutView.as_view(), name="logout"),
    path("admin/", admin.site.urls),
    path("api/v1/", include("scheduler_api.api.urls")),
    path("metrics", MetricsView.as_view(), name="metrics"),
    path("api/schema/", SpectacularAPIView.as_view(), name="schema"),
    path(
        "api/schema/swagger-ui/",
        same_host_only(SpectacularSwaggerView.as_view(url_name="schema")),
        name="swagger-ui",
    ),
    path(
        "api/schema/redoc/",
        same_host_only(SpectacularRedocView.as_view(url_name="schema")),
        name="redoc",
    ),
    path("", include("topology.urls")),
]

handler500 = "webapp.errors.server_error"
