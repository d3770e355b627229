"""Every server error is logged, with its traceback and the request id the response
carries (issue 28: 48 responses with status 500, 0 tracebacks in any log)."""

from __future__ import annotations

import io
import logging

import pytest
from django.test import Client
from rest_framework.test import APIClient

from scheduler_api.api.views import clusters as cluster_views

pytestmark = pytest.mark.django_db


def test_a_500_is_logged_with_its_traceback_and_request_id(
    django_user_model, monkeypatch, caplog
) -> None:
    def broken(*args: object, **kwargs: object) -> None:
        raise RuntimeError("the selector broke")

    monkeypatch.setattr(cluster_views.ClusterViewSet, "list", broken)
    client = APIClient(raise_request_exception=False)
    client.force_authenticate(django_user_model.objects.create_superuser("root"))
    (stderr,) = [h for h in logging.getLogger().handlers if h.get_name() == "stderr"]
    written = io.StringIO()
    previous = stderr.setStream(written)  # the process's stderr, as the deployment reads it
    try:
        with caplog.at_level(logging.ERROR, logger="django.request"):
            response = client.get("/api/v1/clusters", HTTP_X_REQUEST_ID="req-12345678")
    finally:
        stderr.setStream(previous)
    assert response.status_code == 500
    assert response["X-Request-ID"] == "req-12345678"
    (record,) = [r for r in caplog.records if r.name == "django.request"]
    assert record.exc_info and "the selector broke" in str(record.exc_info[1])
    assert record.request_id == "req-12345678"
    logged = written.getvalue()
    assert "[req-12345678]" in logged and "RuntimeError: the selector broke" in logged


def test_every_response_carries_a_request_id() -> None:
    first = Client().get("/no-such-page/")
    second = Client().get("/no-such-page/", HTTP_X_REQUEST_ID="bad id with spaces")
    assert len(first["X-Request-ID"]) == 32
    assert second["X-Request-ID"] != "bad id with spaces"


def test_records_reach_stderr_in_one_line_with_the_request_id() -> None:
    from django.conf import settings

    handler = settings.LOGGING["handlers"]["stderr"]
    assert handler["stream"] == "ext://sys.stderr"
    assert "%(request_id)s" in settings.LOGGING["formatters"]["plain"]["format"]
    assert logging.getLogger().handlers, "the root logger has a handler"


def test_an_api_500_answers_json_in_the_error_shape(django_user_model, monkeypatch) -> None:
    def broken(*args: object, **kwargs: object) -> None:
        raise RuntimeError("boom")

    monkeypatch.setattr(cluster_views.ClusterViewSet, "list", broken)
    client = APIClient(raise_request_exception=False)
    client.force_authenticate(django_user_model.objects.create_superuser("root"))
    response = client.get("/api/v1/clusters")
    assert response.status_code == 500 and response["Content-Type"] == "application/json"
    assert set(response.json()) == {"detail", "errors"}
