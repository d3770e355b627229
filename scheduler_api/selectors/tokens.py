"""Finding the token a request presents."""

from __future__ import annotations

from scheduler_api.models import APIToken


def api_token_by_plaintext(plaintext: str) -> APIToken | None:
    """The token whose digest matches, with its user; None when there is none."""
    digest = APIToken.digest_of(plaintext)
    return APIToken.objects.select_related("user").filter(digest=digest).first()
