"""One permission model: every dashboard page asks what the API asks for the same action,
of every kind of user (issue 27 §6, issue 28 §9: a staff user in no group read every page
and ran what-ifs the API refused; viewers ran what-ifs; non-staff roles could not log in)."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import Group
from django.test import Client
from django.urls import URLPattern, URLResolver, get_resolver, reverse
from rest_framework.test import APIClient

from topology.access import PERMISSIONS, Action

from .test_views import cluster, url  # noqa: F401  (the `cluster` fixture)

pytestmark = pytest.mark.django_db
PERSONAS = ("anonymous", "outsider", "staff-no-role", "viewer", "operator", "admin")
WHATIF_QUERY = "c1-name=a&c1-cpu_request=1&c1-cpu_limit=1&c1-memory_request=1Gi&c1-memory_limit=1Gi"

# every dashboard route: its action, how to open it, and the API operation of that action
PAGES = {
    "home": (Action.READ_CLUSTERS, url("home"), ("get", "/api/v1/clusters")),
    "switch": (Action.READ_CLUSTERS, url("switch") + "?cluster=prod", ("get", "/api/v1/clusters")),
    "sync": (Action.READ_SYNC, url("sync"), None),
    "overview": (Action.READ_NODES, url("overview", cluster="prod"),
                 ("get", "/api/v1/clusters/prod/nodes")),
    "overview-live": (Action.READ_NODES, url("overview-live", cluster="prod"),
                      ("get", "/api/v1/clusters/prod/nodes")),
    "node": (Action.READ_NODE_TOPOLOGY, url("node", cluster="prod", node="koord-1"),
             ("get", "/api/v1/clusters/prod/nodes/koord-1/topology")),
    "node-live": (Action.READ_NODE_TOPOLOGY, url("node-live", cluster="prod", node="koord-1"),
                  ("get", "/api/v1/clusters/prod/nodes/koord-1/topology")),
    "reservations": (Action.READ_RESERVATIONS, url("reservations", cluster="prod"),
                     ("get", "/api/v1/clusters/prod/reservations")),
    "reservation": (Action.READ_RESERVATIONS,
                    url("reservation", cluster="prod", name="resv-web"),
                    ("get", "/api/v1/clusters/prod/reservations/resv-web")),
    "qos": (Action.READ_QOS, url("qos", cluster="prod"), ("get", "/api/v1/clusters/prod/qos")),
    "whatif": (Action.RUN_WHATIF, url("whatif", cluster="prod") + "?" + WHATIF_QUERY,
               ("post", "/api/v1/clusters/prod/whatif")),
    "problems": (Action.READ_DIAGNOSES, url("problems", cluster="prod"),
                 ("get", "/api/v1/clusters/prod/diagnoses")),
    "pod-diagnosis": (Action.READ_DIAGNOSES,
                      url("pod-diagnosis", cluster="prod", namespace="team", name="waiting"),
                      ("get", "/api/v1/clusters/prod/pods/team/waiting/diagnosis")),
    "agreement": (Action.READ_AGREEMENT, url("agreement", cluster="prod"),
                  ("get", "/api/v1/clusters/prod/agreement")),
    "agreement-pod": (Action.READ_AGREEMENT,
                      url("agreement-pod", cluster="prod", namespace="team", name="web-0"),
                      ("get", "/api/v1/clusters/prod/agreement/pods")),
    "whatif-compare": (Action.RUN_WHATIF,
                       url("whatif-compare", cluster="prod") + "?" + WHATIF_QUERY,
                       ("post", "/api/v1/clusters/prod/whatif")),
    "whatif-track": (Action.RUN_WHATIF, url("whatif-track", cluster="prod"),
                     ("post", "/api/v1/clusters/prod/whatif")),
}  # fmt: skip
POSTED = {"whatif-track": {"query": WHATIF_QUERY}}  # routes that take a form post
PUBLIC = {"favicon.ico"}  # needs no login: an icon
WHATIF_BODY = {"containers": [{"name": "a", "requests": {"cpu": "1"}, "limits": {"cpu": "1"}}]}


def user_of(django_user_model, persona: str):  # type: ignore[no-untyped-def]
    if persona == "anonymous":
        return None
    staff = persona != "outsider"
    user = django_user_model.objects.create_user(persona, password="pw-12345678", is_staff=staff)
    if persona in ("viewer", "operator", "admin"):
        user.groups.add(Group.objects.get(name=persona))
    return user


def test_the_table_covers_every_dashboard_route() -> None:
    def names(patterns: list, namespace: str = "") -> set[str]:  # type: ignore[type-arg]
        found: set[str] = set()
        for entry in patterns:
            if isinstance(entry, URLResolver) and entry.namespace == "topology":
                found |= names(entry.url_patterns, "topology")
            elif isinstance(entry, URLPattern) and namespace == "topology":
                found.add(entry.name or str(entry.pattern))
        return found

    assert names(get_resolver().url_patterns) == set(PAGES) | PUBLIC


@pytest.mark.parametrize("persona", PERSONAS)
def test_each_page_allows_exactly_whom_the_api_allows_for_its_action(
    persona,
    django_user_model,
    role_groups,
    cluster,  # noqa: F811
) -> None:
    user = user_of(django_user_model, persona)
    browser, api = Client(), APIClient()
    if user is not None:
        browser.force_login(user)
        api.force_authenticate(user)
    for name, (action, page_url, operation) in PAGES.items():
        page = browser.post(page_url, POSTED[name]) if name in POSTED else browser.get(page_url)
        if user is None:
            assert page.status_code == 302 and page["Location"].startswith(reverse("login"))
            continue
        allowed = user.has_perms(PERMISSIONS[action])
        assert page.status_code in ((200, 302) if allowed else (403,)), (persona, name)
        if operation is not None:
            method, path = operation
            body = WHATIF_BODY if method == "post" else None
            answer = getattr(api, method)(path, body, format="json") if body else api.get(path)
            refused = answer.status_code in (401, 403)  # a 404 (no QoS stored) is allowed
            assert refused != allowed, (persona, name, answer.status_code)


@pytest.mark.parametrize(("persona", "can_log_in"), [
    ("viewer", True), ("operator", True), ("outsider", False), ("staff-no-role", False),
])  # fmt: skip
def test_any_account_with_a_role_logs_in_to_the_dashboard(
    persona, can_log_in, django_user_model, role_groups
) -> None:
    user = user_of(django_user_model, persona)
    if persona == "viewer":
        user.is_staff = False  # a role is enough: no staff flag needed
        user.save()
    response = Client().post(reverse("login"), {"username": persona, "password": "pw-12345678"})
    assert (response.status_code == 302) == can_log_in
    if not can_log_in:
        assert "has no Topolens role" in response.content.decode()


def test_the_login_page_is_topolens_not_django_administration(client) -> None:
    body = client.get(reverse("login")).content.decode()
    assert "Log in to Topolens" in body and "Django administration" not in body


@pytest.mark.parametrize(
    ("persona", "reads", "runs_whatif"),
    [("staff-no-role", False, False), ("viewer", True, False), ("operator", True, True)],
)
def test_what_each_role_may_do(
    persona,
    reads,
    runs_whatif,
    django_user_model,
    role_groups,
    cluster,  # noqa: F811
) -> None:
    client = Client()
    client.force_login(user_of(django_user_model, persona))
    assert (client.get(PAGES["overview"][1]).status_code == 200) == reads
    assert (client.get(PAGES["whatif"][1]).status_code == 200) == runs_whatif
