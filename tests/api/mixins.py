"""Shared endpoint tests (NetBox style): each endpoint class says what to build and where to go.

A subclass sets `path(cluster)` and `make_rows(cluster, count)`; it inherits the
role tests, and, for lists, pagination and a query count that must not grow with rows.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from rest_framework.test import APIClient

from scheduler_api.api.pagination import PageNumberPagination
from topology.models import Cluster

from .conftest import ROLES

ClientFor = Callable[[str], APIClient]


class EndpointTests:
    """Role boundaries of a read endpoint: every role reads, others do not."""

    readers: tuple[str, ...] = ROLES

    def path(self, cluster: Cluster) -> str:
        raise NotImplementedError

    def make_rows(self, cluster: Cluster, count: int) -> None:
        raise NotImplementedError

    def test_an_anonymous_request_gets_401(self, client_for: ClientFor, cluster: Cluster) -> None:
        self.make_rows(cluster, 1)
        response = client_for("anonymous").get(self.path(cluster))
        assert response.status_code == 401
        assert response["WWW-Authenticate"].startswith("Bearer")
        assert set(response.json()) == {"detail", "errors"}

    @pytest.mark.parametrize("persona", [*ROLES, "outsider"])
    def test_each_role_reads_it_and_an_outsider_gets_403(
        self, persona: str, client_for: ClientFor, cluster: Cluster
    ) -> None:
        self.make_rows(cluster, 1)
        response = client_for(persona).get(self.path(cluster))
        assert response.status_code == (200 if persona in self.readers else 403), response.content
        if response.status_code == 403:
            assert "role" in response.json()["detail"]

    def test_an_unknown_cluster_is_404(self, viewer: APIClient, cluster: Cluster) -> None:
        self.make_rows(cluster, 1)
        missing = Cluster(name="no-such-cluster")
        response = viewer.get(self.path(missing))
        assert response.status_code == 404
        assert response.json() == {"detail": response.json()["detail"], "errors": {}}


class ListEndpointTests(EndpointTests):
    """A paginated list: pages, a capped page size, and no N+1 queries."""

    max_queries = 8

    def results(self, client: APIClient, path: str, **params: Any) -> dict[str, Any]:
        response = client.get(path, params)
        assert response.status_code == 200, response.content
        return response.json()

    def test_it_pages_through_every_row(self, viewer: APIClient, cluster: Cluster) -> None:
        self.make_rows(cluster, 3)
        total = self.results(viewer, self.path(cluster))["count"]
        assert total >= 3
        first = self.results(viewer, self.path(cluster), page_size=2)
        assert (first["count"], len(first["results"])) == (total, 2)
        assert first["next"] and first["previous"] is None
        last = self.results(viewer, self.path(cluster), page_size=2, page=(total + 1) // 2)
        assert last["next"] is None and len(last["results"]) == total - 2 * ((total - 1) // 2)

    def test_a_page_past_the_end_is_404(self, viewer: APIClient, cluster: Cluster) -> None:
        self.make_rows(cluster, 1)
        assert viewer.get(self.path(cluster), {"page": 99}).status_code == 404

    def test_the_page_size_is_capped(
        self, viewer: APIClient, cluster: Cluster, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        self.make_rows(cluster, 3)
        monkeypatch.setattr(PageNumberPagination, "max_page_size", 2)
        page = self.results(viewer, self.path(cluster), page_size=500)
        assert len(page["results"]) == 2

    def test_the_query_count_does_not_grow_with_rows(
        self, viewer: APIClient, cluster: Cluster, django_assert_max_num_queries: Any
    ) -> None:
        self.make_rows(cluster, 2)
        with django_assert_max_num_queries(self.max_queries) as few:
            self.results(viewer, self.path(cluster), page_size=100)
        self.make_rows(cluster, 12)
        with django_assert_max_num_queries(self.max_queries) as many:
            page = self.results(viewer, self.path(cluster), page_size=100)
        assert page["count"] > 12
        assert len(many.captured_queries) == len(few.captured_queries)
