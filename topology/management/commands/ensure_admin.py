"""manage.py ensure_admin: create the local `admin` superuser once, password in var/."""

from __future__ import annotations

import secrets
from typing import Any

from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand


class Command(BaseCommand):
    help = "Create a local superuser 'admin' with a generated password kept in var/admin_password."

    def handle(self, *args: Any, **options: Any) -> None:
        user_model = get_user_model()
        password_file = settings.VAR_DIR / "admin_password"
        if user_model.objects.filter(username="admin").exists():
            self.stdout.write("admin user exists; password in var/admin_password if created here")
            return
        password = secrets.token_urlsafe(12)
        user_model.objects.create_superuser("admin", "admin@localhost", password)
        password_file.write_text(password + "\n")
        password_file.chmod(0o600)
        self.stdout.write(f"created superuser admin; password written to {password_file}")
