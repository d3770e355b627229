"""Page-number pagination with a client-chosen page size, capped."""

from __future__ import annotations

from django.conf import settings
from rest_framework import pagination


class PageNumberPagination(pagination.PageNumberPagination):
    page_size_query_param = "page_size"
    max_page_size = settings.API_MAX_PAGE_SIZE
