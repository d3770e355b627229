"""The three roles as Django groups, with their permissions.

- viewer: reads every mirrored model, except credentials (cluster connections, API tokens);
- operator: also runs what-if and edits desired node policies;
- admin: also applies policies to clusters (topology.apply_nodepolicy) and manages
  clusters and their connections, and API tokens.

The permission lists are frozen here, as a migration must be; a later model that a
role should read needs a later migration. `apply_nodepolicy` is created here for the
policy work to check; declaring it in NodePolicy.Meta later reuses this row.
"""

from django.contrib.auth.management import create_permissions
from django.contrib.contenttypes.management import create_contenttypes
from django.db import migrations

VIEWER_READS = [
    "cluster",
    "node",
    "nodetopology",
    "zone",
    "zoneresource",
    "nodecpureservation",
    "pod",
    "podallocation",
    "reservation",
    "qosconfig",
    "qosstrategy",
    "resctrlsetting",
    "nodepolicy",
    "nodefigures",
    "syncstate",
    "syncerror",
    "synclease",
]
OPERATOR_EXTRA = [
    ("scheduler_api", "run_whatif"),
    ("topology", "add_nodepolicy"),
    ("topology", "change_nodepolicy"),
    ("topology", "delete_nodepolicy"),
]
ADMIN_EXTRA = [
    ("topology", "apply_nodepolicy"),
    ("topology", "add_cluster"),
    ("topology", "change_cluster"),
    ("topology", "delete_cluster"),
    ("topology", "view_clusterconnection"),
    ("topology", "add_clusterconnection"),
    ("topology", "change_clusterconnection"),
    ("topology", "delete_clusterconnection"),
    ("scheduler_api", "view_apitoken"),
    ("scheduler_api", "add_apitoken"),
    ("scheduler_api", "change_apitoken"),
    ("scheduler_api", "delete_apitoken"),
]


def _ensure_permissions(apps, schema_editor):
    """Content types and permissions are normally made after migrate; the roles need them now."""
    for app_config in apps.get_app_configs():
        app_config.models_module = True
        create_contenttypes(app_config, verbosity=0, apps=apps)
        create_permissions(app_config, verbosity=0, apps=apps)
        app_config.models_module = None
    ContentType = apps.get_model("contenttypes", "ContentType")
    Permission = apps.get_model("auth", "Permission")
    policy = ContentType.objects.get(app_label="topology", model="nodepolicy")
    Permission.objects.get_or_create(
        content_type=policy,
        codename="apply_nodepolicy",
        defaults={"name": "Can apply node policies to clusters"},
    )


def _permissions(apps, pairs):
    Permission = apps.get_model("auth", "Permission")
    found = []
    for app_label, codename in pairs:
        found.append(
            Permission.objects.get(content_type__app_label=app_label, codename=codename)
        )
    return found


def create_roles(apps, schema_editor):
    _ensure_permissions(apps, schema_editor)
    Group = apps.get_model("auth", "Group")
    viewer = _permissions(apps, [("topology", f"view_{model}") for model in VIEWER_READS])
    operator = viewer + _permissions(apps, OPERATOR_EXTRA)
    admin = operator + _permissions(apps, ADMIN_EXTRA)
    for name, permissions in (("viewer", viewer), ("operator", operator), ("admin", admin)):
        group, _created = Group.objects.get_or_create(name=name)
        group.permissions.add(*permissions)


def delete_roles(apps, schema_editor):
    apps.get_model("auth", "Group").objects.filter(
        name__in=["viewer", "operator", "admin"]
    ).delete()


class Migration(migrations.Migration):
    dependencies = [
        ("scheduler_api", "0001_initial"),
        ("topology", "0003_sync_state"),
        ("auth", "0012_alter_user_first_name_max_length"),
        ("contenttypes", "0002_remove_content_type_name"),
    ]

    operations = [migrations.RunPython(create_roles, delete_roles)]
