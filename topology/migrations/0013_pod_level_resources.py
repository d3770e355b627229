# Pod-level resources (spec.resources, Kubernetes PodLevelResources) on mirrored pods.

from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("topology", "0012_diagnosis_age_on_cluster"),
    ]

    operations = [
        migrations.AddField(
            model_name="pod",
            name="resources",
            field=models.JSONField(
                blank=True,
                default=dict,
                help_text="spec.resources (pod-level requests and limits, defaulted): "
                "{requests, limits}; {} when the pod sets none",
            ),
        ),
    ]
