"""The roles read followed-up predictions (topology 0016): every role sees whether the
what-ifs asked with `track: true` held. They are recorded by running a tracked what-if
(the `run_whatif` permission), never edited."""

from django.db import migrations

from scheduler_api.migrations import _roles

READS = ["view_trackedprediction"]
GRANTS = {"viewer": READS, "operator": READS, "admin": READS}


def grant(apps, schema_editor):
    _roles.grant(apps, GRANTS)


def revoke(apps, schema_editor):
    _roles.revoke(apps, GRANTS)


class Migration(migrations.Migration):
    dependencies = [
        ("scheduler_api", "0007_whatif_task_track"),
        ("topology", "0016_tracked_predictions"),
    ]

    operations = [migrations.RunPython(grant, revoke)]
