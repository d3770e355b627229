"""Reservations: phases, owners, allocation bookkeeping, and the pods that use them."""

from __future__ import annotations

from .check_index import (
    RESERVATION_ALLOCATED,
    ClusterIndex,
    Obj,
    annotation_json,
    label,
    pod_requests,
    resources,
)

PHASES = ("Pending", "Available", "Succeeded", "Waiting", "Failed")
_OWNER_KEYS = ("object", "controller", "labelSelector")


def check_reservations(index: ClusterIndex) -> list[str]:
    problems = []
    for reservation in index.reservations.values():
        problems += _check_one(index, reservation)
    for pod in index.pods_by_uid.values():
        problems += _check_pod_reference(index, pod)
    return problems


def _check_one(index: ClusterIndex, reservation: Obj) -> list[str]:
    who, spec, status = (
        label(reservation),
        reservation.get("spec", {}),
        reservation.get("status", {}),
    )
    problems = []
    phase, node = status.get("phase"), status.get("nodeName")
    if phase not in PHASES:
        problems.append(f"{who}: unknown phase {phase!r}")
    if (phase == "Pending") == bool(node) or (node and node not in index.nodes):
        problems.append(f"{who}: nodeName {node!r} does not fit phase {phase}")
    owners = spec.get("owners") or []
    if not owners or any(not any(owner.get(key) for key in _OWNER_KEYS) for owner in owners):
        problems.append(
            f"{who}: owners must be a non-empty list of object/controller/labelSelector"
        )
    if "ttl" in spec and "expires" in spec:
        problems.append(f"{who}: ttl and expires are exclusive")
    allocatable, allocated = (
        resources(status.get("allocatable")),
        resources(status.get("allocated")),
    )
    if any(amount > allocatable.get(name, 0) for name, amount in allocated.items()):
        problems.append(f"{who}: allocated exceeds allocatable")
    return problems + _check_current_owners(index, reservation, allocated)


def _check_current_owners(
    index: ClusterIndex, reservation: Obj, allocated: dict[str, int]
) -> list[str]:
    who = label(reservation)
    total: dict[str, int] = {}
    problems = []
    for ref in reservation.get("status", {}).get("currentOwners") or []:
        pod = index.pods_by_uid.get(ref.get("uid", ""))
        if pod is None or pod["metadata"]["name"] != ref.get("name"):
            problems.append(f"{who}: current owner {ref.get('name')} is not a known pod")
            continue
        for name, amount in pod_requests(pod).items():
            if name in allocated:
                total[name] = total.get(name, 0) + amount
    if total and total != allocated:
        problems.append(f"{who}: allocated {allocated} differs from its owners' requests {total}")
    return problems


def _check_pod_reference(index: ClusterIndex, pod: Obj) -> list[str]:
    ref = annotation_json(pod, RESERVATION_ALLOCATED)
    if not ref:
        return []
    who = label(pod)
    reservation = index.reservations.get(ref.get("name", ""))
    if reservation is None or reservation["metadata"]["uid"] != ref.get("uid"):
        return [f"{who}: reservation-allocated points to no such Reservation"]
    status = reservation.get("status", {})
    if status.get("phase") not in ("Available", "Succeeded"):
        return [f"{who}: allocated from a {status.get('phase')} Reservation"]
    if status.get("nodeName") != pod.get("spec", {}).get("nodeName"):
        return [f"{who}: runs on another node than its Reservation"]
    if not any(_owns(owner, pod) for owner in reservation.get("spec", {}).get("owners", [])):
        return [f"{who}: matches none of its Reservation's owners"]
    return []


def _owns(owner: Obj, pod: Obj) -> bool:
    meta = pod["metadata"]
    if (target := owner.get("object")) and (target.get("name"), target.get("namespace")) != (
        meta["name"],
        meta["namespace"],
    ):
        return False
    if (controller := owner.get("controller")) and not any(
        ref.get("uid") == controller.get("uid") for ref in meta.get("ownerReferences", [])
    ):
        return False
    if (selector := owner.get("labelSelector")) is not None:
        labels = meta.get("labels", {})
        if any(labels.get(key) != value for key, value in selector.get("matchLabels", {}).items()):
            return False
    return True
