"""v1 Namespace objects for every namespace the demo objects use."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from .meta import NODES_CREATED, DemoContext

ALWAYS_PRESENT = ("default", "kube-system")


def namespaces_used(objects: list[dict[str, Any]]) -> set[str]:
    """Namespaces of namespaced objects, of Reservation templates and owners."""
    used = set(ALWAYS_PRESENT)
    for obj in objects:
        namespace = obj.get("metadata", {}).get("namespace")
        if namespace:
            used.add(namespace)
        if obj.get("kind") == "Reservation":
            used |= _reservation_namespaces(obj)
    return used


def _reservation_namespaces(reservation: dict[str, Any]) -> set[str]:
    spec = reservation.get("spec", {})
    found = {spec.get("template", {}).get("metadata", {}).get("namespace")}
    for owner in spec.get("owners", []):
        for key in ("object", "controller"):
            found.add((owner.get(key) or {}).get("namespace"))
    return {namespace for namespace in found if namespace}


def render_namespace(ctx: DemoContext, name: str, ordinal: int) -> dict[str, Any]:
    created = NODES_CREATED - timedelta(days=16) + timedelta(minutes=ordinal)
    meta = ctx.metadata(
        name, created, uid=ctx.namespace_uid(name), labels={"kubernetes.io/metadata.name": name}
    )
    return {
        "apiVersion": "v1",
        "kind": "Namespace",
        "metadata": meta,
        "spec": {"finalizers": ["kubernetes"]},
        "status": {"phase": "Active"},
    }
