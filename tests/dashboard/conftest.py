"""Personas for the dashboard: a staff member (who may see it) and an anonymous visitor."""

from __future__ import annotations

import pytest
from django.test import Client


@pytest.fixture
def staff(django_user_model):
    return django_user_model.objects.create_user("staff", password=None, is_staff=True)


@pytest.fixture
def staff_client(staff) -> Client:
    client = Client()
    client.force_login(staff)
    return client
