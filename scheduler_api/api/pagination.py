"""Page-number pagination with a client-chosen page size, capped.

A `page` or `page_size` that is not a whole number ≥ 1 is a 400 naming the parameter, as
the schema promises (DRF would quietly use the default size, or answer 404); a page past
the last is a 404, and a page size above the largest is capped, both as documented.
"""

from __future__ import annotations

from typing import Any

from django.conf import settings
from rest_framework import pagination
from rest_framework.exceptions import ValidationError


def _whole_number(request: Any, name: str) -> int | None:
    raw = request.query_params.get(name)
    if raw is None:
        return None
    if not (raw.isascii() and raw.isdigit()) or int(raw) < 1:
        raise ValidationError({name: ["must be a whole number ≥ 1"]})
    return int(raw)


class PageNumberPagination(pagination.PageNumberPagination):
    page_size_query_param = "page_size"
    max_page_size = settings.API_MAX_PAGE_SIZE

    def get_page_size(self, request: Any) -> int | None:
        asked = _whole_number(request, self.page_size_query_param)
        if asked is None:
            return self.page_size
        return min(asked, self.max_page_size) if self.max_page_size else asked

    def paginate_queryset(self, queryset: Any, request: Any, view: Any = None) -> Any:
        if request.query_params.get(self.page_query_param) not in self.last_page_strings:
            _whole_number(request, self.page_query_param)
        return super().paginate_queryset(queryset, request, view)
