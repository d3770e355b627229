"""API tokens: created with a random secret shown once, stored as a SHA-256 digest, revoked.

The text is `tl_` + 43 URL-safe characters (256 random bits); only
`APIToken.digest_of(text)` is stored, so a leaked database leaks no token.
"""

from __future__ import annotations

import secrets
from dataclasses import dataclass
from datetime import datetime, timedelta

from django.contrib.auth.models import AbstractBaseUser
from django.db import transaction
from django.db.models import QuerySet
from django.utils import timezone

from scheduler_api.models import APIToken

TOKEN_PREFIX = "tl_"
PREFIX_SHOWN = len(TOKEN_PREFIX) + 8
# Writing last_used_at on every request would turn every read into a write.
LAST_USED_RESOLUTION = timedelta(minutes=1)


@dataclass(frozen=True)
class IssuedToken:
    token: APIToken
    plaintext: str  # shown to its owner once, never stored


class TokenRefused(PermissionError):
    """A token asked for another user by someone who may not impersonate them."""


@transaction.atomic
def api_token_create(
    *,
    user: AbstractBaseUser,
    name: str,
    expires_at: datetime | None = None,
    issued_by: AbstractBaseUser | None = None,
) -> IssuedToken:
    """A new token of `user`. `issued_by` (whoever asks, when a person does): only a
    superuser may issue a token for someone else, since the token acts as its user and
    every audit record then names that user (TokenRefused otherwise)."""
    if (
        issued_by is not None
        and issued_by.pk != user.pk
        and not getattr(issued_by, "is_superuser", False)
    ):
        raise TokenRefused("a token may be created only for yourself; a superuser may issue one")
    plaintext = TOKEN_PREFIX + secrets.token_urlsafe(32)
    token = APIToken.objects.create(
        user=user,
        name=name,
        prefix=plaintext[:PREFIX_SHOWN],
        digest=APIToken.digest_of(plaintext),
        expires_at=expires_at,
    )
    return IssuedToken(token=token, plaintext=plaintext)


def api_tokens_revoke(*, tokens: QuerySet[APIToken]) -> int:
    """Revoke every token of the queryset not revoked yet; returns how many."""
    return tokens.filter(revoked_at__isnull=True).update(revoked_at=timezone.now())


def api_token_revoke(*, token: APIToken) -> APIToken:
    api_tokens_revoke(tokens=APIToken.objects.filter(pk=token.pk))
    token.refresh_from_db(fields=["revoked_at"])
    return token


def api_token_mark_used(*, token: APIToken) -> None:
    now = timezone.now()
    if token.last_used_at is None or now - token.last_used_at >= LAST_USED_RESOLUTION:
        APIToken.objects.filter(pk=token.pk).update(last_used_at=now)
        token.last_used_at = now
