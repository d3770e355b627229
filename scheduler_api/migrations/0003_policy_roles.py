"""The roles' permissions on the policy-management models (topology 0004).

- viewer: reads QoS drafts, reference pods and the audit history of applies;
- operator: also edits QoS drafts and reference pods (desired state, like node policies);
- admin: as operator; applying stays `topology.apply_nodepolicy`, granted in 0002.

The audit history is written only by the apply services: no role may add or change it.
"""

from django.contrib.auth.management import create_permissions
from django.contrib.contenttypes.management import create_contenttypes
from django.db import migrations

VIEWER_READS = ["qosdraft", "referencepod", "applyrecord"]
OPERATOR_EDITS = [
    f"{action}_{model}"
    for model in ("qosdraft", "referencepod")
    for action in ("add", "change", "delete")
]


def _ensure_permissions(apps):
    for app_config in apps.get_app_configs():
        app_config.models_module = True
        create_contenttypes(app_config, verbosity=0, apps=apps)
        create_permissions(app_config, verbosity=0, apps=apps)
        app_config.models_module = None


def _topology_permissions(apps, codenames):
    Permission = apps.get_model("auth", "Permission")
    return [
        Permission.objects.get(content_type__app_label="topology", codename=codename)
        for codename in codenames
    ]


def grant(apps, schema_editor):
    _ensure_permissions(apps)
    Group = apps.get_model("auth", "Group")
    reads = _topology_permissions(apps, [f"view_{model}" for model in VIEWER_READS])
    edits = _topology_permissions(apps, OPERATOR_EDITS)
    for name, permissions in (
        ("viewer", reads),
        ("operator", reads + edits),
        ("admin", reads + edits),
    ):
        group, _created = Group.objects.get_or_create(name=name)
        group.permissions.add(*permissions)


def revoke(apps, schema_editor):
    Group = apps.get_model("auth", "Group")
    reads = _topology_permissions(apps, [f"view_{model}" for model in VIEWER_READS])
    edits = _topology_permissions(apps, OPERATOR_EDITS)
    for group in Group.objects.filter(name__in=["viewer", "operator", "admin"]):
        group.permissions.remove(*reads, *edits)


class Migration(migrations.Migration):
    dependencies = [
        ("scheduler_api", "0002_roles"),
        ("topology", "0004_policy_management"),
    ]

    operations = [migrations.RunPython(grant, revoke)]
