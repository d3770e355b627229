"""The test suite shares nothing with a running instance (issue 27: `make test` failed
while `make run` ran, its worker taking the suite's tasks from var/broker/)."""

from __future__ import annotations

from pathlib import Path

from django.conf import settings

INSTANCE_VAR = Path(settings.BASE_DIR) / "var"  # what `make run` uses


def test_the_suite_keeps_its_files_apart_from_a_running_instance() -> None:
    assert Path(settings.VAR_DIR).resolve() != INSTANCE_VAR.resolve()
    assert settings.BROKER_DIR.resolve() != (INSTANCE_VAR / "broker").resolve()
    database = settings.DATABASES["default"]
    if database["ENGINE"].endswith("sqlite3"):
        test_db = Path(database["TEST"]["NAME"]).resolve()
        assert test_db.parent == Path(settings.VAR_DIR).resolve()
        assert test_db != (INSTANCE_VAR / "topolens.sqlite3").resolve()


def test_a_task_the_suite_sends_never_reaches_the_instances_broker(tmp_path) -> None:
    """Send through the suite's own Celery app: the message lands in the suite's broker
    (its folder, or Redis in CI), never in the folder a running instance consumes."""
    from celery import current_app

    instance_in = INSTANCE_VAR / "broker" / "in"
    before = set(instance_in.glob("*")) if instance_in.exists() else set()
    with current_app.connection_for_write() as connection:
        current_app.send_task("topology.no_such_task_for_isolation", connection=connection)
    after = set(instance_in.glob("*")) if instance_in.exists() else set()
    assert after == before
    if settings.CELERY_BROKER_URL.startswith("filesystem://"):
        sent = list((settings.BROKER_DIR / "in").glob("*"))
        assert sent, "the message is in the suite's own broker folder"
        for message in sent:
            message.unlink()  # no worker of the suite should run it later
