"""Helpers of the role migrations: topology permissions granted to the role groups."""

from django.contrib.auth.management import create_permissions
from django.contrib.contenttypes.management import create_contenttypes


def _ensure_permissions(apps):
    for app_config in apps.get_app_configs():
        app_config.models_module = True
        create_contenttypes(app_config, verbosity=0, apps=apps)
        create_permissions(app_config, verbosity=0, apps=apps)
        app_config.models_module = None


def _permissions(apps, codenames):
    Permission = apps.get_model("auth", "Permission")
    return [
        Permission.objects.get(content_type__app_label="topology", codename=codename)
        for codename in codenames
    ]


def grant(apps, grants):
    """Give each role group (created if missing) its topology permissions."""
    _ensure_permissions(apps)
    Group = apps.get_model("auth", "Group")
    for name, codenames in grants.items():
        group, _created = Group.objects.get_or_create(name=name)
        group.permissions.add(*_permissions(apps, codenames))


def revoke(apps, grants):
    Group = apps.get_model("auth", "Group")
    for name, codenames in grants.items():
        for group in Group.objects.filter(name=name):
            group.permissions.remove(*_permissions(apps, codenames))
