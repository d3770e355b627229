"""manage.py serve_metrics: /metrics alone, on a port and address of its own (issue 33).

For a Prometheus that should not reach the dashboard's port: the same view (the same
API-token check, 401 without one), every other path 404. Threaded, standard library.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from socketserver import ThreadingMixIn
from typing import Any
from wsgiref.simple_server import WSGIRequestHandler, WSGIServer, make_server

from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.core.wsgi import get_wsgi_application

WSGIApp = Callable[[dict[str, Any], Callable[..., Any]], Iterable[bytes]]


class _ThreadingServer(ThreadingMixIn, WSGIServer):
    daemon_threads = True


class _QuietHandler(WSGIRequestHandler):
    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 (the base's name)
        """No line per scrape on stderr."""


def metrics_only(app: WSGIApp) -> WSGIApp:
    """`app` for GET /metrics; 404 for any other path."""

    def serve(environ: dict[str, Any], start_response: Callable[..., Any]) -> Iterable[bytes]:
        if environ.get("PATH_INFO") != "/metrics":
            start_response("404 Not Found", [("Content-Type", "text/plain; charset=utf-8")])
            return [b"Only /metrics is served on this port.\n"]
        return app(environ, start_response)

    return serve


class Command(BaseCommand):
    help = "Serve /metrics alone on its own address and port (the same token check)."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--address", default="127.0.0.1", help="default 127.0.0.1")
        parser.add_argument("--port", type=int, default=9108, help="default 9108")

    def handle(self, *args: Any, **options: Any) -> None:
        app = metrics_only(get_wsgi_application())
        try:
            server = make_server(
                options["address"], options["port"], app,
                server_class=_ThreadingServer, handler_class=_QuietHandler,
            )  # fmt: skip
        except OSError as error:
            where = f"{options['address']}:{options['port']}"
            raise CommandError(f"cannot listen on {where}: {error}") from None
        self.stdout.write(f"serving /metrics on http://{options['address']}:{server.server_port}/")
        try:
            server.serve_forever()
        except KeyboardInterrupt:
            pass
        finally:
            server.server_close()
