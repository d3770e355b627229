"""Plan a Koordinator Reservation from a what-if: pick the node, build the object, check it.

`node: best` takes the what-if's top-ranked node that fits; a named node must be in
the mirror, and its what-if verdict is reported (a pinned reservation on a node where
the pod does not fit stays Pending, which the preview says before anything is created).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from django.utils import timezone

from topology.choices import WriteKind
from topology.editing.reservation import (
    BEST_NODE,
    DEFAULT_SCHEDULER,
    ReservationInputError,
    ReservationRequest,
    build_reservation,
)
from topology.models import Cluster, Node, Reservation
from topology.services.policies.writeback.diffs import json_lines, unified_diff
from topology.services.policies.writeback.plans import ApplyPlan, Finding, connection_refusals
from topology.services.whatif.question import WhatIfInputError, WhatIfQuestion
from topology.services.whatif.service import ask


@dataclass(frozen=True)
class ReservationPlan:
    plan: ApplyPlan
    node: str
    verdict: dict[str, Any] | None  # the what-if's verdict on that node (fits, reasons, …)

    @property
    def fits(self) -> bool:
        return bool(self.verdict and self.verdict.get("fits"))


def plan_reservation_create(
    *, cluster: Cluster, request: ReservationRequest, now: datetime | None = None
) -> ReservationPlan:
    """Raises ReservationInputError (per field) when the request cannot become an object."""
    node, verdict = _resolve_node(cluster, request)
    body = build_reservation(request, node=node, now=now or timezone.now())
    name = body["metadata"]["name"]
    refusals = connection_refusals(cluster)
    if Reservation.objects.filter(cluster=cluster, name=name).exists():
        refusals.append(Finding("name", f"a Reservation named {name} exists; choose another name"))
    warnings = []
    if verdict is not None and not verdict.get("fits"):
        reasons = "; ".join(verdict.get("reasons") or []) or "no reason given"
        warnings.append(Finding("node", f"the pod does not fit on {node} now ({reasons})"))
    plan = ApplyPlan(
        cluster=cluster,
        kind=WriteKind.RESERVATION,
        object_name=name,
        body=body,
        diff=unified_diff([], json_lines(body), name=f"reservation {name}"),
        resource_version_before="",
        refusals=tuple(refusals),
        warnings=tuple(warnings),
        note="Created with POST; if the name is taken in the cluster, nothing is written.",
    )
    return ReservationPlan(plan=plan, node=node, verdict=verdict)


def _resolve_node(
    cluster: Cluster, request: ReservationRequest
) -> tuple[str, dict[str, Any] | None]:
    verdicts = _verdicts(cluster, request)
    if request.node == BEST_NODE:
        best = next((v for v in verdicts if v.get("fits")), None)
        if best is None:
            raise ReservationInputError({"node": ["the pod fits no node, so there is no best"]})
        return str(best["node"]), best
    if not Node.objects.filter(cluster=cluster, name=request.node).exists():
        raise ReservationInputError({"node": [f"no node {request.node!r} in {cluster.name}"]})
    return request.node, next((v for v in verdicts if v.get("node") == request.node), None)


def _verdicts(cluster: Cluster, request: ReservationRequest) -> list[dict[str, Any]]:
    """Every node's what-if verdict, best first (replicas 0: verdicts only, no placement)."""
    try:
        question = WhatIfQuestion.from_inputs(
            dict(request.pod),
            replicas=0,
            scheduler=request.scheduler,
            scoring=request.scoring,
            weights=dict(request.weights) if request.weights else None,
            capacity=False,  # only the verdicts are read
            # a Reservation is scheduled by koord-scheduler, whatever the pod names
            scheduler_name=DEFAULT_SCHEDULER,
        )
        answer = ask(cluster, question)
    except WhatIfInputError as error:
        raise ReservationInputError(error.field_errors) from error
    return list(answer["nodes"])
