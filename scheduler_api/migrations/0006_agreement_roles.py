"""The roles read the agreement audit (topology 0015): every role sees how often the
engine agrees with where pods landed, and the pods where it does not; nobody edits it
(it is computed)."""

from django.db import migrations

from scheduler_api.migrations import _roles

READS = ["view_podagreement", "view_agreementsample"]
GRANTS = {"viewer": READS, "operator": READS, "admin": READS}


def grant(apps, schema_editor):
    _roles.grant(apps, GRANTS)


def revoke(apps, schema_editor):
    _roles.revoke(apps, GRANTS)


class Migration(migrations.Migration):
    dependencies = [
        ("scheduler_api", "0005_diagnosis_roles"),
        ("topology", "0015_agreement"),
    ]

    operations = [migrations.RunPython(grant, revoke)]
