"""manage.py sync_cluster --cluster NAME [--kubeconfig PATH [--context CTX] | --in-cluster]
[--once | --duration SECONDS]: register a cluster and sync its mirror from here."""

from __future__ import annotations

import signal
import threading
from typing import Any

from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError, CommandParser

from topology.choices import ConnectionMode
from topology.models import Cluster
from topology.services.mirror.figures import recompute_figures
from topology.services.sync.clusters import cluster_connect
from topology.sync import lease
from topology.sync.client import credentials_of
from topology.sync.errors import SyncConnectError
from topology.sync.report import SyncReport
from topology.sync.session import ClusterSync
from topology.sync.settings import SyncSettings


class Command(BaseCommand):
    help = (
        "Register or update a cluster's connection, then list every mirrored kind (--once) "
        "or list and keep watching until stopped or --duration elapses. Prints, per kind, "
        "the objects listed, the events applied and the errors."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--cluster", required=True, help="cluster name (created if new)")
        how = parser.add_mutually_exclusive_group()
        how.add_argument("--kubeconfig", help="kubeconfig file to connect with")
        how.add_argument("--in-cluster", action="store_true", help="use this pod's service account")
        parser.add_argument("--context", default="", help="kubeconfig context (default: current)")
        when = parser.add_mutually_exclusive_group()
        when.add_argument("--once", action="store_true", help="one full list, then exit")
        when.add_argument("--duration", type=float, help="watch for this many seconds, then exit")

    def handle(self, *args: Any, **options: Any) -> None:
        cluster = self._register(options)
        settings = SyncSettings.load()
        owner = lease.new_owner("command")
        if not lease.acquire(cluster.pk, owner, settings.lease_seconds):
            raise CommandError(
                f"cluster {cluster.name} is being synced by {lease.live_owner(cluster.pk)}; "
                "wait for it, or disable its connection in admin first"
            )
        session = ClusterSync(cluster, credentials_of(cluster.connection), settings, owner=owner)
        try:
            report = self._run(session, options)
        except SyncConnectError as exc:
            raise CommandError(f"cannot sync cluster {cluster.name}: {exc}") from None
        finally:
            lease.release(cluster.pk, owner)
        self._print(report)
        figures = recompute_figures(cluster_id=cluster.pk)
        self.stdout.write(f"cluster {cluster.name}: figures recomputed for {figures} nodes")
        if not report.ok:
            raise CommandError(_failure(report))

    def _register(self, options: dict[str, Any]) -> Cluster:
        mode = None
        if options["in_cluster"]:
            mode = ConnectionMode.IN_CLUSTER
        elif options["kubeconfig"]:
            mode = ConnectionMode.KUBECONFIG
        elif options["context"]:
            raise CommandError("--context goes with --kubeconfig")
        if mode is not None:
            try:
                return cluster_connect(
                    name=options["cluster"],
                    mode=mode,
                    kubeconfig_path=options["kubeconfig"] or "",
                    context=options["context"],
                )
            except ValidationError as exc:
                raise CommandError("; ".join(exc.messages)) from None
        cluster = Cluster.objects.select_related("connection").filter(name=options["cluster"])
        found = cluster.first()
        if found is None or not hasattr(found, "connection"):
            raise CommandError(
                f"cluster {options['cluster']} has no connection yet: "
                "give --kubeconfig PATH [--context CTX] or --in-cluster"
            )
        return found

    def _run(self, session: ClusterSync, options: dict[str, Any]) -> SyncReport:
        if options["once"]:
            return session.run_once()
        if threading.current_thread() is not threading.main_thread():
            return session.run_watch(duration=options["duration"])
        # Ctrl-C (or SIGTERM) ends the watch cleanly: buffered events are written first.
        previous = {sig: signal.getsignal(sig) for sig in (signal.SIGINT, signal.SIGTERM)}
        for sig in previous:
            signal.signal(sig, lambda *_: session.stop())
        try:
            return session.run_watch(duration=options["duration"])
        finally:
            for sig, handler in previous.items():
                signal.signal(sig, handler)

    def _print(self, report: SyncReport) -> None:
        for line in report.lines():
            self.stdout.write(line)


def _failure(report: SyncReport) -> str:
    parts = [f"{report.total('errors')} object(s) could not be mirrored"]
    parts += [f"list incomplete: {what}" for what in report.incomplete]
    return "; ".join(parts)
