"""One rule for a cluster's data age, shared by the dashboard, the API and the what-if."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from topology.selectors.types import (
    IMPORT_SOURCE,
    NEVER_SOURCE,
    SYNC_SOURCE,
    stalest_data_age,
)

NOW = datetime(2026, 11, 21, 12, 0, tzinfo=UTC)
EARLIER = NOW - timedelta(minutes=5)
IMPORTED = NOW - timedelta(hours=1)


@pytest.mark.parametrize(
    ("synced", "imported", "as_of", "source"),
    [
        ([], None, None, NEVER_SOURCE),
        ([], IMPORTED, IMPORTED, IMPORT_SOURCE),
        ([None, None], IMPORTED, IMPORTED, IMPORT_SOURCE),
        ([NOW, EARLIER], None, EARLIER, SYNC_SOURCE),
        ([NOW, EARLIER], IMPORTED, EARLIER, SYNC_SOURCE),
        # A collection not listed yet still holds the import's rows: as old as the import.
        ([NOW, None], IMPORTED, IMPORTED, SYNC_SOURCE),
    ],
)
def test_the_age_is_the_stalest_input(
    synced: list[datetime | None], imported: datetime | None, as_of: datetime | None, source: str
) -> None:
    age = stalest_data_age(synced, imported)
    assert (age.as_of, age.source) == (as_of, source)


def test_a_collection_never_listed_nor_imported_makes_the_age_unknown() -> None:
    age = stalest_data_age([NOW, None], None)
    assert age.as_of is None
    assert "not listed yet" in age.source
