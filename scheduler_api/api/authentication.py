"""Bearer tokens for automation: `Authorization: Bearer tl_…`."""

from __future__ import annotations

from typing import Any

from rest_framework.authentication import BaseAuthentication, get_authorization_header
from rest_framework.exceptions import AuthenticationFailed
from rest_framework.request import Request

from scheduler_api.models import APIToken
from scheduler_api.selectors.tokens import api_token_by_plaintext
from scheduler_api.services.tokens import api_token_mark_used

KEYWORD = "Bearer"


class APITokenAuthentication(BaseAuthentication):
    """A request without a Bearer header is left to the next class (the browser session)."""

    def authenticate(self, request: Request) -> tuple[Any, APIToken] | None:
        parts = get_authorization_header(request).split()
        if not parts or parts[0].lower() != KEYWORD.lower().encode():
            return None
        if len(parts) != 2:
            raise AuthenticationFailed("Give exactly one token after 'Bearer'.")
        try:
            plaintext = parts[1].decode("ascii")
        except UnicodeDecodeError:
            raise AuthenticationFailed("Invalid token.") from None
        return self._check(api_token_by_plaintext(plaintext))

    def _check(self, token: APIToken | None) -> tuple[Any, APIToken]:
        if token is None:
            raise AuthenticationFailed("Invalid token.")
        if token.is_revoked:
            raise AuthenticationFailed("This token has been revoked.")
        if token.is_expired:
            raise AuthenticationFailed("This token has expired.")
        if not token.user.is_active:
            raise AuthenticationFailed("The token's user is inactive.")
        api_token_mark_used(token=token)
        return token.user, token

    def authenticate_header(self, request: Request) -> str:
        return f'{KEYWORD} realm="api"'
