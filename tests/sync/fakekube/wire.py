"""Shapes on the wire shared by the server and its handler."""

from __future__ import annotations

import json
from dataclasses import dataclass


@dataclass(frozen=True)
class Request:
    method: str
    path: str
    query: dict[str, str]
    at: float = 0.0  # time.monotonic() on arrival
    body: bytes = b""  # as received, so tests can check the exact body of a write
    content_type: str = ""

    @property
    def is_watch(self) -> bool:
        return self.query.get("watch", "").lower() in ("1", "t", "true")


def status_body(
    code: int, reason: str, message: str, *, details: dict[str, str] | None = None
) -> bytes:
    """A metav1.Status, as the API server sends with every error."""
    status = {
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Failure",
        "message": message,
        "reason": reason,
        "code": code,
    }
    if details is not None:
        status["details"] = details
    return json.dumps(status).encode()
