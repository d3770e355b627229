"""What a sync did, per collection: printed by the command, returned by the tasks."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

from topology.choices import SyncResource
from topology.sync.resources import SYNC_ORDER

COLUMNS = ("listed", "events", "written", "removed", "skipped", "errors", "failures")


@dataclass
class SyncReport:
    """Counters per collection; `failures` are failed requests, `errors` bad objects."""

    counts: dict[SyncResource, Counter[str]] = field(default_factory=dict)
    versions: dict[SyncResource, str] = field(default_factory=dict)
    not_served: dict[SyncResource, str] = field(default_factory=dict)
    incomplete: list[str] = field(default_factory=list)

    def add(self, resource: SyncResource, what: str, n: int = 1) -> None:
        if n:
            self.counts.setdefault(resource, Counter())[what] += n

    def total(self, what: str) -> int:
        return sum(counter[what] for counter in self.counts.values())

    @property
    def ok(self) -> bool:
        return not self.incomplete and not self.total("errors")

    def lines(self) -> list[str]:
        rows = [f"{'collection':<46}{'version':<10}" + "".join(f"{c:>9}" for c in COLUMNS)]
        for resource in SYNC_ORDER:
            if resource in self.not_served:
                rows.append(f"{resource.value:<46}not served: {self.not_served[resource]}")
            elif resource in self.versions:
                counter = self.counts.get(resource, Counter())
                rows.append(
                    f"{resource.value:<46}{self.versions[resource]:<10}"
                    + "".join(f"{counter[c]:>9}" for c in COLUMNS)
                )
        return rows

    def as_dict(self) -> dict[str, object]:
        return {
            "collections": {r.value: dict(c) for r, c in self.counts.items()},
            "not_served": {r.value: why for r, why in self.not_served.items()},
            "incomplete": list(self.incomplete),
        }
