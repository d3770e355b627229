"""The roles read the diagnosis models (topology 0010): every role sees why pods are
Pending or rejected, the data-truth findings and the pods' warning events; nobody edits
them (they are computed or mirrored)."""

from django.db import migrations

from scheduler_api.migrations import _roles

READS = ["view_poddiagnosis", "view_finding", "view_podevent"]
GRANTS = {"viewer": READS, "operator": READS, "admin": READS}


def grant(apps, schema_editor):
    _roles.grant(apps, GRANTS)


def revoke(apps, schema_editor):
    _roles.revoke(apps, GRANTS)


class Migration(migrations.Migration):
    dependencies = [
        ("scheduler_api", "0004_scheduler_configuration_roles"),
        ("topology", "0010_diagnosis"),
    ]

    operations = [migrations.RunPython(grant, revoke)]
