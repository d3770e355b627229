"""Shared fixtures of the write-back tests: a pytest plugin that the test_writeback*
modules and test_reservation_create load through `pytest_plugins` (never import it:
pytest could then not rewrite its asserts). Constants and helpers: writeback_support.

A cluster synced from the fake API server (the sync tests' five-node demo cluster) and
an admin who may apply.
"""

from __future__ import annotations

from typing import Any

import pytest
from django.contrib.auth.models import Group, User

from tests.sync import conftest as sync_fixtures
from tests.sync.conftest import sync_once
from tests.sync.fakekube import FakeKubeServer
from topology.models import Cluster

# The sync tests' fixtures: a fake API server loaded with the demo cluster, a kubeconfig
# for it, and fast sync settings.
demo_items = sync_fixtures.demo_items
make_fake = sync_fixtures.make_fake
fake = sync_fixtures.fake
connect = sync_fixtures.connect
fast = sync_fixtures.fast


@pytest.fixture
def synced(fake: FakeKubeServer, connect: Any, fast: Any) -> Cluster:
    """A cluster connected to the fake server and synced once: mirror == cluster."""
    cluster = connect(fake)
    sync_once(cluster, fast)
    return cluster


@pytest.fixture
def admin_user(db: None) -> User:
    user = User.objects.create_user("ada", password=None, is_staff=True)
    user.groups.add(Group.objects.get(name="admin"))
    return user
