"""Scheduler configurations in admin: a document is checked when saved (the field at
fault is named), its profiles are listed, and only the admin role may edit one."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import Group
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client
from django.urls import reverse

from topology.models import Cluster, SchedulerConfiguration

pytestmark = pytest.mark.django_db
ADD = reverse("admin:topology_schedulerconfiguration_add")
GOOD = """\
apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
- schedulerName: topo-aware
  plugins: {multiPoint: {enabled: [{name: NodeResourceTopologyMatch}]}}
"""
BAD = GOOD.replace("NodeResourceTopologyMatch}]}}", "NodeResourceTopologyMatch}]}}\n"
                   "  pluginConfig: [{name: NodeResourceTopologyMatch, "
                   "args: {scoringStrategy: {type: Nope}}}]")  # fmt: skip


@pytest.fixture
def cluster() -> Cluster:
    return Cluster.objects.create(name="prod")


def client_in(django_user_model, role: str) -> Client:
    user = django_user_model.objects.create_user(role, password=None, is_staff=True)
    user.groups.add(Group.objects.get(name=role))
    client = Client()
    client.force_login(user)
    return client


def test_a_bad_document_is_refused_with_the_field_at_fault(
    django_user_model, role_groups, cluster
) -> None:
    admin_client = client_in(django_user_model, "admin")
    response = admin_client.post(ADD, {"cluster": cluster.pk, "name": "kube", "document": BAD})
    assert response.status_code == 200
    assert "scoringStrategy.type" in response.content.decode()
    assert not SchedulerConfiguration.objects.exists()


def test_an_uploaded_configmap_is_read_and_its_profiles_listed(
    django_user_model, role_groups, cluster
) -> None:
    admin_client = client_in(django_user_model, "admin")
    wrapped = "kind: ConfigMap\napiVersion: v1\ndata:\n  config.yaml: |\n" + "".join(
        f"    {line}\n" for line in GOOD.splitlines()
    )
    upload = SimpleUploadedFile("cm.yaml", wrapped.encode())
    response = admin_client.post(
        ADD, {"cluster": cluster.pk, "name": "kube", "document": "", "upload": upload}
    )
    assert response.status_code == 302, response.content.decode()[:2000]
    config = SchedulerConfiguration.objects.get()
    page = admin_client.get(
        reverse("admin:topology_schedulerconfiguration_change", args=[config.pk])
    )
    assert "topo-aware" in page.content.decode() and "scheduler-plugins" in page.content.decode()


@pytest.mark.parametrize(("role", "can_add"), [("viewer", False), ("operator", False)])
def test_only_the_admin_role_edits_them(
    django_user_model, role_groups, cluster, role, can_add
) -> None:
    client = client_in(django_user_model, role)
    response = client.post(ADD, {"cluster": cluster.pk, "name": "kube", "document": GOOD})
    assert response.status_code == 403
    assert not SchedulerConfiguration.objects.exists()
    listing = client.get(reverse("admin:topology_schedulerconfiguration_changelist"))
    assert listing.status_code == 200  # they may read what judges their answers


def test_a_synced_document_is_shown_but_never_edited_in_admin(
    django_user_model, role_groups, cluster
) -> None:
    """Issue 27: a document the sync keeps is the cluster's; an edit here would be undone."""
    synced = SchedulerConfiguration.objects.create(
        cluster=cluster, name="koord-scheduler-config", document=GOOD,
        synced_from="koordinator-system/koord-scheduler-config", resource_version="7",
    )  # fmt: skip
    admin_client = client_in(django_user_model, "admin")
    change = reverse("admin:topology_schedulerconfiguration_change", args=[synced.pk])
    page = admin_client.get(change).content.decode()
    assert "koordinator-system/koord-scheduler-config" in page and "topo-aware" in page
    assert 'name="document"' not in page  # shown read-only
    admin_client.post(change, {"cluster": cluster.pk, "name": "x", "document": BAD})
    synced.refresh_from_db()
    assert synced.name == "koord-scheduler-config" and synced.document == GOOD
    listing = admin_client.get(reverse("admin:topology_schedulerconfiguration_changelist"))
    assert (
        "synced from ConfigMap koordinator-system/koord-scheduler-config"
        in listing.content.decode()
    )
