from django.urls import path

from topology import views

app_name = "topology"
urlpatterns = [
    path("", views.overview, name="overview"),
]
