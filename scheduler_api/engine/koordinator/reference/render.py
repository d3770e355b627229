"""The resource-status annotation koord-scheduler's PreBind writes, byte for byte."""

from __future__ import annotations

import json
from collections.abc import Mapping

from scheduler_api.engine.koordinator.reference.numa import Allocation
from scheduler_api.engine.model.kubernetes import default_format
from scheduler_api.engine.model.results import QuantityFormat, format_cpuset, format_quantity


def _quantity(name: str, amount: int, fmt: QuantityFormat) -> str:
    return format_quantity(amount, fmt, milli=name == "cpu")


def render_resource_status(allocation: Allocation, formats: Mapping[str, QuantityFormat]) -> str:
    """scheduling.koordinator.sh/resource-status exactly as json.Marshal writes it."""
    status: dict[str, object] = {}
    if allocation.cpuset:
        status["cpuset"] = format_cpuset(allocation.cpuset)
    if allocation.numa_resources:
        status["numaNodeResources"] = [
            {"node": numa, "resources": {
                name: _quantity(name, amount, formats.get(name, default_format(name)))
                for name, amount in sorted(resources.items())
            }}
            for numa, resources in allocation.numa_resources
        ]  # fmt: skip
    return json.dumps(status, separators=(",", ":"))
