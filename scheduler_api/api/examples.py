"""OpenAPI examples for what-if: the questions a CI pipeline asks and the answers it gets."""

from __future__ import annotations

from drf_spectacular.utils import OpenApiExample

_MANIFEST = {
    "apiVersion": "v1",
    "kind": "Pod",
    "metadata": {"name": "db", "namespace": "prod"},
    "spec": {
        "containers": [
            {
                "name": "db",
                "resources": {
                    "requests": {"cpu": "8", "memory": "16Gi"},
                    "limits": {"cpu": "8", "memory": "16Gi"},
                },
            }
        ]
    },
}
_FITS = {
    "scheduler": "auto",
    "scoring": "LeastAllocated",
    "data_age_seconds": 42.0,
    "nodes": [
        {
            "node": "worker-01",
            "system": "scheduler-plugins",
            "fits": True,
            "score": 94,
            "reasons": [],
            "numa_zones": [1],
            "cpuset": [8, 9, 10, 11, 40, 41, 42, 43],
            "annotations": {},
            "notes": [],
        },
        {
            "node": "worker-02",
            "system": "crane",
            "fits": False,
            "score": None,
            "reasons": ["no single NUMA zone has 8 CPUs available (zone 0: 6, zone 1: 4)"],
            "numa_zones": [],
            "cpuset": None,
            "annotations": {},
            "notes": [],
        },
    ],
    "placements": [
        {"replica": 0, "node": "worker-01", "numa_zones": [1], "cpuset": [8, 9, 10, 11]}
    ],
    "capacity": {"total": 3, "per_node": {"worker-01": 3, "worker-02": 0}},
}
_NO_FIT = {
    **_FITS,
    "nodes": [_FITS["nodes"][1]],
    "placements": [{"replica": 0, "node": None, "numa_zones": [], "cpuset": None}],
    "capacity": {"total": 0, "per_node": {"worker-02": 0}},
}
_NOT_COUNTED = {**_FITS, "capacity": None}

WHATIF_EXAMPLES = [
    OpenApiExample(
        "A Pod manifest",
        value={"pod": _MANIFEST, "replicas": 2, "scheduler": "auto"},
        request_only=True,
    ),
    OpenApiExample(
        "The compact form (Koordinator, whole physical cores)",
        value={
            "containers": [
                {
                    "name": "app",
                    "requests": {"cpu": "4", "memory": "8Gi"},
                    "limits": {"cpu": "4", "memory": "8Gi"},
                }
            ],
            "koordinator_qos_class": "LSR",
            "koordinator_cpu_bind_policy": "FullPCPUs",
            "koordinator_cpu_bind_required": True,
            "scheduler": "koordinator",
            "scoring": "MostAllocated",
        },
        request_only=True,
    ),
    OpenApiExample(
        "Will it fit? (a CI gate: no capacity count, the fastest answer)",
        value={"pod": _MANIFEST, "capacity": False},
        request_only=True,
    ),
    OpenApiExample(
        "Compare every scheduler (runs in the background)",
        value={
            "containers": [{"name": "app", "requests": {"cpu": "2"}, "limits": {"cpu": "2"}}],
            "crane_cpu_policy": "exclusive",
            "scheduler": "all",
        },
        request_only=True,
    ),
    OpenApiExample("It fits", value=_FITS, response_only=True, status_codes=["200"]),
    OpenApiExample(
        "It fits nowhere (still a 200)", value=_NO_FIT, response_only=True, status_codes=["200"]
    ),
    OpenApiExample(
        "Capacity not counted (capacity: false)",
        value=_NOT_COUNTED,
        response_only=True,
        status_codes=["200"],
    ),
    OpenApiExample(
        "Accepted: poll the task",
        value={
            "id": "3f0c1a52-1a9e-4a55-9a56-2f4f3c1c2b7d",
            "cluster": "prod",
            "state": "pending",
            "created_at": "2026-01-05T10:00:00Z",
            "started_at": None,
            "finished_at": None,
            "result": None,
            "comparison": None,
            "error": None,
        },
        response_only=True,
        status_codes=["202"],
    ),
]
