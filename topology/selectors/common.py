"""Small helpers every selector module shares."""

from __future__ import annotations

from typing import Any

from django.core.exceptions import ObjectDoesNotExist
from django.core.paginator import Page
from django.db.models import Model


def related_or_none(obj: Model, name: str) -> Model | None:
    """A reverse one-to-one (topology, figures, …) or None when the row does not exist."""
    try:
        return getattr(obj, name)
    except ObjectDoesNotExist:
        return None


def page_notice(asked: str | None, page: Page[Any]) -> str:
    """Why the page shown is not the one asked for ("" when it is)."""
    if not asked or asked == str(page.number):
        return ""
    if not (asked.isascii() and asked.isdigit()) or int(asked) < 1:
        return f"“{asked}” is not a page number: showing page {page.number}."
    return f"There are {page.paginator.num_pages} pages: showing the last."
