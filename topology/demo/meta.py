"""Deterministic identities for generated objects: uids, names, versions and timestamps."""

from __future__ import annotations

import random
import uuid
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

# The demo's clock runs up to now (read once per process, so one process generates one
# cluster): the fleet was racked 17 days ago, workloads started 3 days ago, and the
# snapshot is now. Reservations and their TTLs are then current when a user looks, and
# those that lapse later are shown expired, as a real cluster's would be.
SNAPSHOT_TIME = datetime.now(UTC).replace(second=0, microsecond=0)
NODES_CREATED = SNAPSHOT_TIME - timedelta(days=17)
WORKLOADS_START = SNAPSHOT_TIME - timedelta(days=3)

# The alphabet of Kubernetes' generated name suffixes (no vowels, no look-alikes).
_NAME_ALPHABET = "bcdfghjklmnpqrstvwxz2456789"


def timestamp(moment: datetime) -> str:
    return moment.strftime("%Y-%m-%dT%H:%M:%SZ")


@dataclass
class DemoContext:
    """Everything random comes from here, so one seed gives one cluster.

    `rng` drives the structure (shapes, pods, sizes); `id_rng` only mints uids, and is
    seeded with the cluster name too, so two demo clusters share a layout but no uid.
    """

    rng: random.Random
    id_rng: random.Random
    cluster: str
    _resource_version: int = 4_100_000
    _names: set[tuple[str, str]] = field(default_factory=set)
    _owners: dict[tuple[str, str, str, str], tuple[str, str]] = field(default_factory=dict)

    @classmethod
    def create(cls, seed: int, cluster: str) -> DemoContext:
        return cls(
            rng=random.Random(seed), id_rng=random.Random(f"{cluster}/{seed}"), cluster=cluster
        )

    def uid(self) -> str:
        return str(uuid.UUID(int=self.id_rng.getrandbits(128), version=4))

    def hex_digest(self, length: int = 64) -> str:
        return f"{self.id_rng.getrandbits(length * 4):0{length}x}"

    def resource_version(self) -> str:
        self._resource_version += self.rng.randint(1, 97)
        return str(self._resource_version)

    def suffix(self, length: int = 5) -> str:
        return "".join(self.rng.choice(_NAME_ALPHABET) for _ in range(length))

    def unique_name(self, namespace: str, prefix: str, length: int = 5) -> str:
        while True:
            name = f"{prefix}-{self.suffix(length)}"
            if (namespace, name) not in self._names:
                self._names.add((namespace, name))
                return name

    def owner(self, namespace: str, kind: str, base: str, variant: str = "") -> tuple[str, str]:
        """(name, uid) of a controller, stable across every pod it owns.

        `variant` separates controllers of the same app whose templates differ (one
        ReplicaSet per scheduler), so no ReplicaSet owns pods of two pod templates.
        """
        key = (namespace, kind, base, variant)
        if key not in self._owners:
            name = (
                base
                if kind == "DaemonSet"
                else f"{base}-{self.suffix(10 if kind == 'ReplicaSet' else 5)}"
            )
            self._owners[key] = (name, self.uid())
        return self._owners[key]

    def namespace_uid(self, namespace: str) -> str:
        return self.owner("", "Namespace", namespace)[1]

    def minutes_after(self, start: datetime, low: int, high: int) -> datetime:
        return start + timedelta(minutes=self.rng.randint(low, high))

    def metadata(
        self,
        name: str,
        created: datetime,
        *,
        namespace: str | None = None,
        uid: str | None = None,
        labels: dict[str, str] | None = None,
        annotations: dict[str, str] | None = None,
        owner_references: list[dict[str, Any]] | None = None,
    ) -> dict[str, Any]:
        meta: dict[str, Any] = {"name": name}
        if namespace is not None:
            meta["namespace"] = namespace
        meta |= {
            "uid": uid or self.uid(),
            "resourceVersion": self.resource_version(),
            "creationTimestamp": timestamp(created),
        }
        optional = {
            "labels": labels,
            "annotations": annotations,
            "ownerReferences": owner_references,
        }
        meta |= {key: value for key, value in optional.items() if value}
        return meta
