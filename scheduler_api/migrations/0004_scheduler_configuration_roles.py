"""The roles' permissions on the clusters' scheduler configurations (topology 0008).

- viewer and operator: read them (every what-if answer says which profile judged it);
- admin: also add, change and delete them, since they decide every user's answers.
"""

from django.db import migrations

from scheduler_api.migrations import _roles

MODEL = "schedulerconfiguration"
READS = [f"view_{MODEL}"]
EDITS = [f"{action}_{MODEL}" for action in ("add", "change", "delete")]
GRANTS = {"viewer": READS, "operator": READS, "admin": READS + EDITS}


def grant(apps, schema_editor):
    _roles.grant(apps, GRANTS)


def revoke(apps, schema_editor):
    _roles.revoke(apps, GRANTS)


class Migration(migrations.Migration):
    dependencies = [
        ("scheduler_api", "0003_policy_roles"),
        ("topology", "0008_scheduler_configuration"),
    ]

    operations = [migrations.RunPython(grant, revoke)]
