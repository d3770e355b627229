"""The parsers' shortcuts read exactly what their checked paths read.

A well-formed value takes a shortcut (no field path built); anything else goes through
the checked path, which names the field at fault. Both are compared here on every
combination of a small table of JSON values, well-formed or not: the same result, or
the same error on the same field.
"""

from itertools import product
from typing import Any

from topology.parsers.errors import ObjectParseError
from topology.parsers.fields import Reader
from topology.parsers.nrt import _checked_upstream_resource, _costs, _upstream_resource
from topology.parsers.pod import _checked_container, _container

ABSENT = object()  # the key is left out
VALUES = [None, True, False, 0, 7, -1, "", "x", "2", "500m", "4Gi", "lots", {}, {"a": "b"}, [], [1]]
QUANTITY_MAPS = [ABSENT, None, "x", [], {}, {"cpu": "2"}, {"memory": "4Gi"}, {"cpu": "lots"}]
QUANTITY_MAPS += [{"cpu": True}, {"cpu": "-1"}, {"cpu": None}, {"cpu": "1", "memory": 5}]


def outcome(read, *args: Any) -> tuple[str, Any]:
    """What a read returns, or which field its error names and why."""
    try:
        return ("value", read(*args))
    except ObjectParseError as exc:
        return ("error", (exc.field, exc.message))


def with_keys(**fields: Any) -> dict[str, Any]:
    return {key: value for key, value in fields.items() if value is not ABSENT}


def test_a_section_reads_each_field_as_the_reader_reads_its_path():
    sections = [ABSENT, "text", [1], {}, *({"k": value} for value in VALUES)]
    for section, typ, default in product(
        sections, [str, int, dict, list, bool], [ABSENT, None, "", 0]
    ):
        reader = Reader(with_keys(metadata=section), "Pod")
        args = () if default is ABSENT else (default,)
        via_section = outcome(reader.at("metadata").get, "k", typ, *args)
        assert via_section == outcome(reader.get, "metadata.k", typ, *args), (section, typ, default)


def test_a_section_reads_a_string_map_as_the_reader_reads_its_path():
    maps = [*VALUES, {"a": "b", "c": 1}, {"a": None}, {"a": {"b": "c"}}]
    for section in [ABSENT, "text", {}, *({"k": value} for value in maps)]:
        reader = Reader(with_keys(metadata=section), "Pod")
        via_section = outcome(reader.at("metadata").string_map, "k")
        assert via_section == outcome(reader.string_map, "metadata.k"), section


def test_a_container_reads_as_its_checked_path_reads_it():
    reader = Reader({"metadata": {"name": "p"}}, "Pod")
    resources = [
        ABSENT,
        None,
        "x",
        [],
        *(
            with_keys(limits=limits, requests=requests)
            for limits, requests in product(QUANTITY_MAPS, QUANTITY_MAPS)
        ),
    ]
    items = [
        "main",
        None,
        [],
        *(
            with_keys(name=name, resources=held)
            for name, held in product(["main", 5, None, ABSENT], resources)
        ),
    ]
    for item in items:
        fast = outcome(_container, reader, "spec.containers", 0, item)
        assert fast == outcome(_checked_container, reader, "spec.containers[0]", item), item


def test_a_zone_resource_reads_as_its_checked_path_reads_it():
    reader = Reader({"metadata": {"name": "n"}}, "NodeResourceTopology")
    amounts = [ABSENT, None, "4", 8, "4Gi", "lots", "-1", True]
    items = [
        "cpu",
        None,
        *(
            with_keys(name=name, capacity=capacity, allocatable=allocatable, available=available)
            for name, capacity, allocatable, available in product(
                ["cpu", "memory", 5, ABSENT], amounts, amounts, amounts
            )
        ),
    ]
    for item in items:
        fast = outcome(_upstream_resource, reader, "zones[0]", 1, item)
        checked = outcome(_checked_upstream_resource, reader, "zones[0].resources[1]", item)
        assert fast == checked, item


def costs_before_their_shortcut(reader: Reader, path: str, costs: Any) -> dict[str, int]:
    result: dict[str, int] = {}
    for index, item in enumerate(costs or []):
        reader.check(f"{path}[{index}]", item, dict)
        name = reader.check(f"{path}[{index}].name", item.get("name"), str)
        result[name] = reader.check(f"{path}[{index}].value", item.get("value"), int)
    return result


def test_zone_costs_read_as_they_did_before_their_shortcut():
    reader = Reader({"metadata": {"name": "n"}}, "NodeResourceTopology")
    entries = [
        None,
        "node-1",
        [],
        *(
            with_keys(name=name, value=value)
            for name, value in product(
                ["node-0", "node-1", 3, None, ABSENT], [10, 21, True, "10", None, ABSENT]
            )
        ),
    ]
    for first, second in product(entries, entries):
        costs = [first, second]
        expected = outcome(costs_before_their_shortcut, reader, "zones[0].costs", costs)
        assert outcome(_costs, reader, "zones[0].costs", costs) == expected, costs
    for costs in (None, [], {}):
        assert outcome(_costs, reader, "zones[0].costs", costs) == ("value", {})
