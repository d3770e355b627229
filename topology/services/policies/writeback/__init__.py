"""Write-back: what Topolens writes to a cluster, guarded by resourceVersion and audited.

plans (what would be written, and whether it may be) → requests (the audit row, the
task queued on commit) → run (the task's body: write, or record the conflict).
"""

from topology.services.policies.writeback.plans import (
    ApplyPlan,
    Finding,
    plan_node_policy_apply,
    plan_qos_apply,
)
from topology.services.policies.writeback.requests import (
    APPLY_TASK,
    request_node_policy_apply,
    request_plan,
    request_qos_apply,
    request_reservation_create,
)
from topology.services.policies.writeback.reservations import (
    ReservationPlan,
    plan_reservation_create,
)
from topology.services.policies.writeback.run import run_apply

__all__ = [
    "APPLY_TASK",
    "ApplyPlan",
    "Finding",
    "ReservationPlan",
    "plan_node_policy_apply",
    "plan_qos_apply",
    "plan_reservation_create",
    "request_node_policy_apply",
    "request_plan",
    "request_qos_apply",
    "request_reservation_create",
    "run_apply",
]
