"""After a write (or a conflict), the object as the cluster has it goes into the mirror at
once, through the sync's own apply path, so the mirror does not wait for the watch."""

from __future__ import annotations

import logging
from typing import Any

from django.db import DatabaseError, transaction
from django.utils import timezone

from topology.choices import WriteKind
from topology.models import Cluster
from topology.sync.apply import apply_objects
from topology.sync.resources import NODES, QOS_CONFIG, RESERVATIONS, Resource

logger = logging.getLogger(__name__)


def resource_of(kind: WriteKind, obj: dict[str, Any]) -> Resource:
    if kind == WriteKind.NODE_POLICY:
        return NODES
    if kind == WriteKind.QOS_CONFIG:
        return QOS_CONFIG
    return RESERVATIONS.at(str(obj.get("apiVersion", "")).rpartition("/")[2])


def mirror_object(cluster: Cluster, kind: WriteKind, obj: dict[str, Any]) -> str:
    """Apply one object to the mirror in a savepoint; "" when done, else why not.

    A failure here never undoes the audit row: the cluster was (or was not) written
    either way, and the watch brings the object later.
    """
    try:
        with transaction.atomic():
            applied = apply_objects(cluster, resource_of(kind, obj), [obj], timezone.now())
    except DatabaseError as exc:
        logger.warning("write-back: mirroring %s failed: %s", kind, exc)
        return f"the mirror could not be updated now ({type(exc).__name__}); the sync will"
    if applied.bad:
        error = next(iter(applied.bad.values()))
        return f"the mirror could not read the cluster's object ({error}); it keeps the old one"
    return ""
