"""Failures of the sync, described without leaking credentials.

An ApiException's text carries response headers and body, and kubeconfig errors name
the file; neither belongs in logs or admin, so errors are turned into short sentences.
"""

from __future__ import annotations

import json

from kubernetes.client.exceptions import ApiException
from kubernetes.config.config_exception import ConfigException
from urllib3.exceptions import (
    MaxRetryError,
    NewConnectionError,
    ProtocolError,
    ReadTimeoutError,
)
from urllib3.exceptions import (
    TimeoutError as Urllib3Timeout,
)


class SyncConnectError(RuntimeError):
    """The cluster could not be reached or authenticated against at all."""


class ResourceGone(RuntimeError):
    """The collection is no longer served (its CRD was removed): stop watching it."""


def describe(exc: BaseException) -> str:
    """A one-line, credential-free account of a failure."""
    if isinstance(exc, ApiException):
        return _describe_api(exc)
    if isinstance(exc, MaxRetryError) and exc.reason is not None:
        return describe(exc.reason)
    if isinstance(exc, NewConnectionError):
        return "cannot connect to the API server"
    if isinstance(exc, ReadTimeoutError | Urllib3Timeout | TimeoutError):
        return "the API server did not answer in time"
    if isinstance(exc, ProtocolError):
        return "the connection to the API server broke off"
    if isinstance(exc, ConfigException):
        return "the cluster's credentials could not be loaded (kubeconfig or service account)"
    return type(exc).__name__


def _describe_api(exc: ApiException) -> str:
    reason = exc.reason or ""
    message = ""
    if exc.body:
        try:
            body = json.loads(exc.body)
        except (TypeError, ValueError):
            body = None
        if isinstance(body, dict):
            message = str(body.get("message", ""))[:200]
    text = f"HTTP {exc.status} {reason}".strip()
    return f"{text}: {message}" if message else text
