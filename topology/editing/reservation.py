"""A Koordinator `Reservation` built from a what-if pod: the exact object Topolens creates.

Field names follow koordinator `apis/scheduling/v1alpha1/reservation_types.go`
(formats.md §3.1): `spec.template` is a PodTemplateSpec whose `spec.nodeName` pins
the reservation to one node (koord-scheduler then reserves there or nowhere);
`owners` are ORed, each an `object` (ObjectReference) or a `labelSelector`; `ttl` (a
Go duration, `0` = never) and `expires` (RFC 3339) exclude each other; `allocateOnce`
defaults to true upstream. Pure: no Django, no database.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from topology.parsers.duration import parse_go_duration
from topology.parsers.errors import FieldError

API_VERSION = "scheduling.koordinator.sh/v1alpha1"
KIND = "Reservation"
DEFAULT_SCHEDULER = "koord-scheduler"
MANAGED_BY = {"app.kubernetes.io/managed-by": "topolens"}
BEST_NODE = "best"
# koord-scheduler places Reservations, so by default it is the one that judges the node.
RESERVATION_SCHEDULER = "koordinator"
# What a reservation's pod template keeps of each container: its identity and its size.
_CONTAINER_KEYS = ("name", "image", "resources")
# What it keeps of the pod spec besides containers: what decides where and whether it fits.
_POD_SPEC_KEYS = ("schedulerName", "priorityClassName", "priority", "tolerations")
_OBJECT_REF_KEYS = ("apiVersion", "kind", "namespace", "name", "uid")
_SELECTOR_OPERATORS = ("In", "NotIn", "Exists", "DoesNotExist")
_DNS_SUBDOMAIN = re.compile(r"^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$")
MAX_NAME_LENGTH = 253

FieldErrors = dict[str, list[str]]


class ReservationInputError(ValueError):
    """A reservation request that cannot be built; `field_errors` says what to fix where."""

    def __init__(self, field_errors: Mapping[str, list[str]]) -> None:
        self.field_errors = {k: list(v) for k, v in field_errors.items()}
        super().__init__("; ".join(f"{k}: {' '.join(v)}" for k, v in self.field_errors.items()))


@dataclass(frozen=True)
class ReservationRequest:
    """What a user asks for: a pod (a Pod manifest), where, for whom and for how long.

    `node` is a node name, or `best` for the what-if's top-ranked fitting node.
    """

    pod: Mapping[str, Any]
    node: str
    owners: Sequence[Mapping[str, Any]]
    name: str = ""
    ttl: str | None = None
    expires: datetime | None = None
    allocate_once: bool = True
    # How the node is judged (and `best` found): the what-if's options.
    scheduler: str = RESERVATION_SCHEDULER
    scoring: str | None = None
    weights: Mapping[str, int] | None = None


def build_reservation(request: ReservationRequest, *, node: str, now: datetime) -> dict[str, Any]:
    """The Reservation object, pinned to `node` (already resolved from `best`).

    Raises ReservationInputError naming every field at fault.
    """
    errors: FieldErrors = {}
    owners = _owners(request.owners, errors)
    lifetime = _lifetime(request.ttl, request.expires, now, errors)
    name = request.name or default_name(_pod_name(request.pod), node)
    if not valid_name(name):
        errors.setdefault("name", []).append(
            f"{name!r} is not a valid object name (lower-case letters, digits, '-' and '.', "
            f"at most {MAX_NAME_LENGTH} characters)"
        )
    template = _template(request.pod, node, errors)
    if errors:
        raise ReservationInputError(errors)
    spec: dict[str, Any] = {"template": template, "owners": owners, **lifetime}
    spec["allocateOnce"] = request.allocate_once
    return {
        "apiVersion": API_VERSION,
        "kind": KIND,
        "metadata": {"name": name, "labels": dict(MANAGED_BY)},
        "spec": spec,
    }


def default_name(pod_name: str, node: str) -> str:
    """`<pod>-<node>`, made a valid object name; the same inputs give the same name, so a
    preview and the create that follows it name the same object."""
    raw = f"{pod_name}-{node}".lower()
    cleaned = re.sub(r"[^a-z0-9.-]+", "-", raw)[:MAX_NAME_LENGTH]
    return cleaned.strip("-.") or "reservation"


def valid_name(name: str) -> bool:
    return len(name) <= MAX_NAME_LENGTH and bool(_DNS_SUBDOMAIN.match(name))


def _pod_name(pod: Mapping[str, Any]) -> str:
    return str(_mapping(pod.get("metadata")).get("name") or "reservation")


# Template ---------------------------------------------------------------------------


def _template(pod: Mapping[str, Any], node: str, errors: FieldErrors) -> dict[str, Any]:
    metadata, spec = _mapping(pod.get("metadata")), _mapping(pod.get("spec"))
    containers = _containers(spec.get("containers"), "pod.spec.containers", errors)
    if not containers and "pod.spec.containers" not in errors:
        errors["pod.spec.containers"] = ["a reservation needs at least one container"]
    template_spec: dict[str, Any] = {k: spec[k] for k in _POD_SPEC_KEYS if k in spec}
    template_spec.setdefault("schedulerName", DEFAULT_SCHEDULER)
    template_spec["containers"] = containers
    if spec.get("initContainers"):
        template_spec["initContainers"] = _containers(
            spec["initContainers"], "pod.spec.initContainers", errors
        )
    template_spec["nodeName"] = node
    template_metadata: dict[str, Any] = {"namespace": metadata.get("namespace") or "default"}
    for key in ("labels", "annotations"):
        if _mapping(metadata.get(key)):
            template_metadata[key] = dict(_mapping(metadata[key]))
    return {"metadata": template_metadata, "spec": template_spec}


def _mapping(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


def _containers(items: Any, path: str, errors: FieldErrors) -> list[dict[str, Any]]:
    if not isinstance(items, list):
        errors[path] = ["expected a list of containers"]
        return []
    kept = []
    for index, item in enumerate(items):
        if not isinstance(item, Mapping) or not item.get("name"):
            errors[f"{path}.{index}"] = ["a container needs a name"]
            continue
        kept.append({k: item[k] for k in _CONTAINER_KEYS if k in item})
    return kept


# Owners ------------------------------------------------------------------------------


def _owners(owners: Sequence[Mapping[str, Any]], errors: FieldErrors) -> list[dict[str, Any]]:
    if not owners:
        errors["owners"] = ["a reservation needs at least one owner (object or labelSelector)"]
        return []
    result = []
    for index, owner in enumerate(owners):
        path = f"owners.{index}"
        if not isinstance(owner, Mapping) or set(owner) - {"object", "labelSelector"}:
            errors[path] = ["an owner is {object: {kind, namespace, name}} or {labelSelector}"]
            continue
        if not owner:
            errors[path] = ["an owner needs object or labelSelector"]
            continue
        built: dict[str, Any] = {}
        if "object" in owner:
            built["object"] = _object_ref(owner["object"], f"{path}.object", errors)
        if "labelSelector" in owner:
            selector = owner["labelSelector"]
            built["labelSelector"] = _label_selector(selector, f"{path}.labelSelector", errors)
        result.append(built)
    return result


def _object_ref(ref: Any, path: str, errors: FieldErrors) -> dict[str, str]:
    if not isinstance(ref, Mapping) or not isinstance(ref.get("name"), str) or not ref["name"]:
        errors[path] = ["a named object needs at least its name (and usually kind, namespace)"]
        return {}
    unknown = set(ref) - set(_OBJECT_REF_KEYS)
    if unknown:
        errors[path] = [f"unknown keys {sorted(unknown)}; allowed: {list(_OBJECT_REF_KEYS)}"]
    if not all(isinstance(ref.get(k, ""), str) for k in _OBJECT_REF_KEYS):
        errors[path] = ["every field of an object reference is a string"]
    return {k: str(ref[k]) for k in _OBJECT_REF_KEYS if ref.get(k)}


def _label_selector(selector: Any, path: str, errors: FieldErrors) -> dict[str, Any]:
    """A metav1.LabelSelector with at least one term (an empty one would match every pod)."""
    if not isinstance(selector, Mapping) or set(selector) - {"matchLabels", "matchExpressions"}:
        errors[path] = ["a label selector has matchLabels and/or matchExpressions"]
        return {}
    labels = selector.get("matchLabels") or {}
    expressions = selector.get("matchExpressions") or []
    if not isinstance(labels, Mapping) or not all(
        isinstance(k, str) and isinstance(v, str) for k, v in labels.items()
    ):
        errors[f"{path}.matchLabels"] = ["matchLabels maps label keys to string values"]
    if not isinstance(expressions, list):
        errors[f"{path}.matchExpressions"] = ["matchExpressions is a list"]
        expressions = []
    for index, term in enumerate(expressions):
        _check_expression(term, f"{path}.matchExpressions.{index}", errors)
    if not labels and not expressions:
        errors[path] = ["an empty selector would let every pod use the reservation"]
    built: dict[str, Any] = {}
    if labels:
        built["matchLabels"] = dict(labels)
    if expressions:
        built["matchExpressions"] = [dict(term) for term in expressions]
    return built


def _check_expression(term: Any, path: str, errors: FieldErrors) -> None:
    if not isinstance(term, Mapping) or not isinstance(term.get("key"), str) or not term["key"]:
        errors[path] = ["an expression needs a key"]
        return
    operator, values = term.get("operator"), term.get("values") or []
    if operator not in _SELECTOR_OPERATORS:
        errors[path] = [f"operator must be one of {', '.join(_SELECTOR_OPERATORS)}"]
    elif not isinstance(values, list) or not all(isinstance(v, str) for v in values):
        errors[path] = ["values is a list of strings"]
    elif (operator in ("In", "NotIn")) != bool(values):
        errors[path] = ["In and NotIn need values; Exists and DoesNotExist take none"]


# Lifetime ----------------------------------------------------------------------------


def _lifetime(
    ttl: str | None, expires: datetime | None, now: datetime, errors: FieldErrors
) -> dict[str, str]:
    """`ttl` or `expires` (never both); neither leaves Koordinator's default of 24h."""
    if ttl is not None and expires is not None:
        errors["expires"] = ["give ttl or expires, not both (Koordinator checks expires first)"]
        return {}
    if ttl is not None:
        try:
            parse_go_duration(ttl)
        except FieldError as exc:
            errors["ttl"] = [str(exc)]
        return {"ttl": ttl}
    if expires is not None:
        if expires.tzinfo is None:
            errors["expires"] = ["give a time zone (e.g. 2030-01-01T00:00:00Z)"]
        elif expires <= now:
            errors["expires"] = ["must be in the future"]
        else:
            return {"expires": expires.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")}
    return {}
