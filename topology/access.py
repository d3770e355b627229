"""Who may do what: one permission set per action, read by the dashboard and the API.

The same action asks the same permissions on every surface (issue 27: a viewer ran
what-ifs in the dashboard that the API refused them). The roles (Django groups viewer,
operator, admin; `scheduler_api/migrations`) grant these permissions; a superuser holds
them all.
"""

from __future__ import annotations

from collections.abc import Callable
from enum import StrEnum
from functools import wraps
from typing import Any

from django.contrib.auth.decorators import login_required
from django.contrib.auth.forms import AuthenticationForm
from django.core.exceptions import PermissionDenied, ValidationError
from django.http import HttpRequest, HttpResponse


class Action(StrEnum):
    READ_CLUSTERS = "read clusters"
    READ_NODES = "read nodes"
    READ_NODE_TOPOLOGY = "read a node's topology"
    READ_RESERVATIONS = "read reservations"
    READ_QOS = "read QoS configuration"
    READ_SYNC = "read sync health"
    RUN_WHATIF = "run what-ifs"
    READ_DIAGNOSES = "read pod diagnoses and findings"
    READ_AGREEMENT = "read the agreement audit"
    READ_PREDICTIONS = "read followed-up predictions"
    READ_METRICS = "read the Prometheus metrics"


PERMISSIONS: dict[Action, tuple[str, ...]] = {
    Action.READ_CLUSTERS: ("topology.view_cluster",),
    Action.READ_NODES: ("topology.view_cluster", "topology.view_node"),
    Action.READ_NODE_TOPOLOGY: ("topology.view_node", "topology.view_nodetopology"),
    Action.READ_RESERVATIONS: ("topology.view_reservation",),
    Action.READ_QOS: ("topology.view_qosconfig",),
    Action.READ_SYNC: ("topology.view_syncstate",),
    Action.RUN_WHATIF: ("scheduler_api.run_whatif", "topology.view_cluster"),
    Action.READ_DIAGNOSES: (
        "topology.view_cluster",
        "topology.view_poddiagnosis",
        "topology.view_finding",
    ),
    Action.READ_AGREEMENT: (
        "topology.view_cluster",
        "topology.view_podagreement",
        "topology.view_agreementsample",
    ),
    Action.READ_PREDICTIONS: ("topology.view_cluster", "topology.view_trackedprediction"),
    Action.READ_METRICS: ("topology.view_cluster", "topology.view_node"),
}


def may(user: Any, action: Action) -> bool:
    return bool(user and user.is_authenticated and user.has_perms(PERMISSIONS[action]))


View = Callable[..., HttpResponse]


def requires(action: Action) -> Callable[[View], View]:
    """A dashboard view that needs `action`: anonymous users go to the login page, users
    whose role lacks it get a 403 naming what is needed."""

    def decorate(view: View) -> View:
        @wraps(view)
        def checked(request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
            if not may(request.user, action):
                needed = ", ".join(PERMISSIONS[action])
                raise PermissionDenied(f"Your role does not allow you to {action} ({needed}).")
            return view(request, *args, **kwargs)

        return login_required(checked)

    return decorate


class RoleAuthenticationForm(AuthenticationForm):
    """The dashboard's login: any active account with a role (staff or not); an account
    without one is told so instead of meeting a 403 on every page."""

    def confirm_login_allowed(self, user: Any) -> None:
        super().confirm_login_allowed(user)
        if not may(user, Action.READ_CLUSTERS):
            raise ValidationError(
                "This account has no Topolens role (viewer, operator or admin): "
                "ask an admin to add it to one.",
                code="no_role",
            )
