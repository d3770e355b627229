"""Ask for an apply: write the audit row (pending, or refused with why), and queue the task.

Refused plans are recorded too (status error, nothing queued): the audit shows every
apply that was asked for, not only those that ran. The task is sent by name once the
row is committed, so it never runs before the row exists.
"""

from __future__ import annotations

from typing import Any

from celery import current_app
from django.db import transaction
from django.utils import timezone

from topology.choices import ApplyStatus
from topology.editing.reservation import ReservationRequest
from topology.models import ApplyRecord, Cluster, NodePolicy
from topology.services.policies.writeback.plans import (
    ApplyPlan,
    plan_node_policy_apply,
    plan_qos_apply,
)
from topology.services.policies.writeback.reservations import plan_reservation_create

APPLY_TASK = "topology.run_apply"


def request_node_policy_apply(*, policy: NodePolicy, user: Any) -> ApplyRecord:
    return request_plan(plan=plan_node_policy_apply(policy), user=user)


def request_qos_apply(*, cluster: Cluster, user: Any) -> ApplyRecord:
    return request_plan(plan=plan_qos_apply(cluster), user=user)


def request_reservation_create(
    *, cluster: Cluster, spec: ReservationRequest, user: Any
) -> ApplyRecord:
    """Raises ReservationInputError when the request cannot become a Reservation."""
    return request_plan(plan=plan_reservation_create(cluster=cluster, request=spec).plan, user=user)


@transaction.atomic
def request_plan(*, plan: ApplyPlan, user: Any) -> ApplyRecord:
    """The audit row for a plan; queued when the plan is allowed, finished as refused if not."""
    authenticated = user is not None and user.is_authenticated
    record = ApplyRecord(
        cluster=plan.cluster,
        cluster_name=plan.cluster.name,
        kind=plan.kind,
        object_name=plan.object_name,
        user=user if authenticated else None,
        username=user.get_username() if authenticated else "",
        patch=plan.body,
        diff=plan.diff,
        resource_version_before=plan.resource_version_before,
    )
    if not plan.allowed:
        record.status = ApplyStatus.ERROR
        record.message = plan.refusal_message()
        record.finished_at = timezone.now()
    else:
        record.queued_at, record.times_queued = timezone.now(), 1
    record.save()
    if plan.allowed:
        record_id = record.pk
        transaction.on_commit(lambda: send_apply_task(record_id))
    return record


def send_apply_task(record_id: int) -> None:
    current_app.send_task(APPLY_TASK, args=[record_id])
