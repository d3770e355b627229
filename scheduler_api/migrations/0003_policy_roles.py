"""The roles' permissions on the policy-management models (topology 0004).

- viewer: reads QoS drafts, reference pods and the audit history of applies;
- operator: also edits QoS drafts and reference pods (desired state, like node policies);
- admin: as operator; applying stays `topology.apply_nodepolicy`, granted in 0002.

The audit history is written only by the apply services: no role may add or change it.
"""

from django.db import migrations

from scheduler_api.migrations import _roles

VIEWER_READS = ["qosdraft", "referencepod", "applyrecord"]
OPERATOR_EDITS = [
    f"{action}_{model}"
    for model in ("qosdraft", "referencepod")
    for action in ("add", "change", "delete")
]
READS = [f"view_{model}" for model in VIEWER_READS]
GRANTS = {"viewer": READS, "operator": READS + OPERATOR_EDITS, "admin": READS + OPERATOR_EDITS}


def grant(apps, schema_editor):
    _roles.grant(apps, GRANTS)


def revoke(apps, schema_editor):
    _roles.revoke(apps, GRANTS)


class Migration(migrations.Migration):
    dependencies = [
        ("scheduler_api", "0002_roles"),
        ("topology", "0004_policy_management"),
    ]

    operations = [migrations.RunPython(grant, revoke)]
