"""Personas (healthchecks style): a viewer, an operator, an admin, an outsider, and anonymous.

Roles are the groups migration 0002_roles creates, so these tests also check it.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest
from django.contrib.auth.models import Group, User
from rest_framework.test import APIClient

from scheduler_api.choices import Role
from tests.factories import ClusterFactory
from tests.topology.helpers import sample_items
from topology.models import Cluster
from topology.services.mirror.importer import import_objects

ROLES = tuple(Role.values)
PERSONAS = (*ROLES, "outsider")


def make_user(persona: str) -> User:
    user = User.objects.create_user(username=f"{persona}-user", password=None)
    if persona in ROLES:
        user.groups.add(Group.objects.get(name=persona))
    return user


@pytest.fixture
def user_for(db: None) -> Callable[[str], User]:
    made: dict[str, User] = {}

    def _user(persona: str) -> User:
        if persona not in made:
            made[persona] = make_user(persona)
        return made[persona]

    return _user


@pytest.fixture
def client_for(user_for: Callable[[str], User]) -> Callable[[str], APIClient]:
    """A client logged in (browser session) as the persona; "anonymous" is not logged in."""

    def _client(persona: str) -> APIClient:
        client = APIClient()
        if persona != "anonymous":
            client.force_login(user_for(persona))
        return client

    return _client


@pytest.fixture
def viewer(client_for: Callable[[str], APIClient]) -> APIClient:
    return client_for("viewer")


@pytest.fixture
def operator(client_for: Callable[[str], APIClient]) -> APIClient:
    return client_for("operator")


@pytest.fixture
def admin(client_for: Callable[[str], APIClient]) -> APIClient:
    return client_for("admin")


@pytest.fixture
def cluster(db: None) -> Cluster:
    return ClusterFactory(name="prod")


@pytest.fixture
def small_cluster(db: None) -> Cluster:
    """The reference sample (8 nodes of every flavour, 123 pods, QoS) through the parsers."""
    summary = import_objects(cluster_name="small", objects=sample_items("cluster-small.json"))
    assert summary.ok, summary.errors
    return Cluster.objects.get(name="small")


TRIO = {"worker-01", "worker-02", "worker-03"}


def trio_items() -> list[dict[str, object]]:
    """The sample's first three nodes (upstream, Crane, Koordinator) with their pods."""

    def keep(item: dict) -> bool:
        if item["kind"] in ("Node", "NodeResourceTopology"):
            return item["metadata"]["name"] in TRIO
        if item["kind"] == "Pod":
            return item.get("spec", {}).get("nodeName", "") in TRIO
        return True

    return [item for item in sample_items("cluster-small.json") if keep(item)]


@pytest.fixture
def trio(db: None) -> Cluster:
    """A cluster of one node per system, small enough for many what-ifs to stay fast."""
    summary = import_objects(cluster_name="trio", objects=trio_items())
    assert summary.ok, summary.errors
    return Cluster.objects.get(name="trio")
