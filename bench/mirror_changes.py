"""Changes to a benchmark's mirror made the way the sync makes them (shared by benches).

Each goes through the sync's own writers, so the mirror version moves and whatever
watches it (the snapshot cache, the diagnosis refresh) sees a real change. Django must
be set up before any of these is called.
"""

from __future__ import annotations

import time
from typing import Any


def relabel_bound_pod(cluster: Any, step: int) -> None:
    """Relabel one of the cluster's first 50 bound pods (picked by `step`) through the
    pod writer. The label value is new on every call, also on a reused database."""
    from django.utils import timezone

    from topology.models import Pod
    from topology.parsers import MirroredKind
    from topology.parsers.pod import parse_pod
    from topology.services.mirror.exporter import pod_object
    from topology.services.mirror.writers import write_records

    pod = Pod.objects.filter(cluster=cluster).exclude(node_name="").order_by("id")[step % 50]
    obj = pod_object(pod)
    change = f"{step}-{time.time_ns()}"
    obj["metadata"].setdefault("labels", {})["bench-step"] = change
    obj["metadata"]["resourceVersion"] = f"bench-{change}"
    write_records(cluster, MirroredKind.POD, [parse_pod(obj)], timezone.now())
