"""Personas for the dashboard: an operator (who may read every page and run what-ifs)
and an anonymous visitor. Other roles are in the access table test."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import Group
from django.test import Client


@pytest.fixture
def staff(django_user_model, role_groups):
    user = django_user_model.objects.create_user("staff", password=None, is_staff=True)
    user.groups.add(Group.objects.get(name="operator"))
    return user


@pytest.fixture
def staff_client(staff) -> Client:
    client = Client()
    client.force_login(staff)
    return client
