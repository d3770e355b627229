"""Small helpers every selector module shares."""

from __future__ import annotations

from django.core.exceptions import ObjectDoesNotExist
from django.db.models import Model


def related_or_none(obj: Model, name: str) -> Model | None:
    """A reverse one-to-one (topology, figures, …) or None when the row does not exist."""
    try:
        return getattr(obj, name)
    except ObjectDoesNotExist:
        return None
