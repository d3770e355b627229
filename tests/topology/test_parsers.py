"""Parsers on every reference sample, with exact values, and malformed inputs."""

import json

import pytest

from topology.choices import AllocationSource, Flavour, ReservationPhase
from topology.parsers import parse_object
from topology.parsers.errors import ObjectParseError
from topology.parsers.fields import Reader
from topology.parsers.koordlet import _checked_cpu_topology
from topology.parsers.node import parse_node
from topology.parsers.nrt import parse_nrt
from topology.parsers.pod import parse_pod
from topology.parsers.qos_config import parse_qos_configmap, render_resctrl
from topology.parsers.reservation import parse_reservation

from .helpers import find, first, sample_items


def zone_resource(record, numa_id, name):
    zone = next(z for z in record.zones if z.numa_id == numa_id)
    return next(r for r in zone.resources if r.name == name)


def test_upstream_v1alpha2_zone_values_are_exact():
    record = parse_nrt(first(sample_items("node-upstream-v1alpha2.json"), "NodeResourceTopology"))
    assert record.flavour == Flavour.UPSTREAM_V1ALPHA2
    assert record.attributes["topologyManagerPolicy"] == "single-numa-node"
    cpu = zone_resource(record, 0, "cpu")
    assert (cpu.capacity, cpu.allocatable) == (56000, 52000)
    assert cpu.available == 2000
    zone0 = next(z for z in record.zones if z.numa_id == 0)
    assert zone0.costs == {"node-0": 10, "node-1": 21}


def test_crane_zones_use_names_without_dash_and_carry_reserved_cpus():
    record = parse_nrt(first(sample_items("node-crane.json"), "NodeResourceTopology"))
    assert record.flavour == Flavour.CRANE
    assert [z.numa_id for z in record.zones] == list(range(8))
    assert record.crane_cpu_manager_policy == "Static"
    assert record.crane_topology_policy == "SingleNUMANodePodLevel"
    cpu0 = zone_resource(record, 0, "cpu")
    assert (cpu0.capacity, cpu0.allocatable, cpu0.available) == (32000, 28000, None)
    assert record.zones[0].reserved_cpus == 4
    assert record.crane_reserved == {"cpu": 4000, "memory": 4 * 2**30}


def test_koordinator_nrt_carries_cpu_topology_and_kubelet_state():
    record = parse_nrt(
        first(sample_items("node-koordinator-v1alpha1.json"), "NodeResourceTopology")
    )
    assert record.flavour == Flavour.KOORDINATOR
    koordlet = record.koordlet
    assert len(koordlet.cpus) == 32
    assert koordlet.cpus[16] == (16, 0, 0, 0)  # the sibling of cpu 0
    assert koordlet.cpu_manager_policy == "static"
    assert koordlet.cpu_manager_options == {"full-pcpus-only": "true"}
    assert koordlet.kubelet_reserved_cpus == frozenset({0, 16})
    assert koordlet.pod_cpu_allocs[0].cpuset == frozenset({11, 27})
    assert koordlet.node_reservation.reserved_cpus == frozenset({14, 15, 30, 31})
    assert koordlet.cpu_basic_info["catL3CbmMask"] == "3ff"


def test_node_reservation_annotation_is_parsed():
    record = parse_node(find(sample_items("cluster-small.json"), "Node", "worker-06"))
    assert record.reservation.reserved_cpus == frozenset({127, 255})
    assert record.reservation.apply_policy == "ReservedCPUsOnly"
    assert record.reservation.cpu_count == 2
    assert record.capacity["memory"] == 1057277280 * 1024


def _node_with_reservation(value: str) -> dict:
    node = find(sample_items("cluster-small.json"), "Node", "worker-06")
    node["metadata"]["annotations"]["node.koordinator.sh/reservation"] = value
    return node


@pytest.mark.parametrize(
    ("value", "cpu", "policy"),
    [
        pytest.param('{"resources": {"cpu": 1.5}}', 1500, "", id="json-number-quantity"),
        pytest.param('{"resources": {"cpu": null}}', 0, "", id="null-quantity-is-zero"),
        pytest.param(
            '{"reservedCPUs": "0-3", "applyPolicy": "Strict"}', None, "Strict", id="other-policy"
        ),
    ],
)
def test_a_node_reservation_is_read_as_koordinator_unmarshals_it(value, cpu, policy):
    reservation = parse_node(_node_with_reservation(value)).reservation
    assert reservation.resources.get("cpu") == cpu
    assert reservation.apply_policy == policy


@pytest.mark.parametrize(
    "value",
    [
        pytest.param("", id="empty"),
        pytest.param("{not json", id="invalid-json"),
        pytest.param('{"resources": {"cpu": "1C"}}', id="bad-quantity"),
        pytest.param('{"reservedCPUs": "0-3, 8"}', id="bad-cpulist"),
    ],
)
def test_a_node_reservation_koordinator_cannot_read_is_ignored_and_the_node_kept(value, caplog):
    record = parse_node(_node_with_reservation(value))
    assert record.reservation is None
    assert record.allocatable  # the node itself is mirrored
    assert not value or "node.koordinator.sh/reservation" in caplog.text


def _koordinator_pod_with_status(status: str) -> dict:
    pod = next(
        i
        for i in sample_items("node-koordinator-v1alpha1.json")
        if i["kind"] == "Pod"
        and "scheduling.koordinator.sh/resource-status" in i["metadata"].get("annotations", {})
    )
    pod["metadata"]["annotations"]["scheduling.koordinator.sh/resource-status"] = status
    return pod


def test_a_resource_status_koord_scheduler_cannot_read_is_ignored_and_the_pod_kept(caplog):
    record = parse_pod(_koordinator_pod_with_status('{"cpuset": "0-3,"}'))
    assert record.allocations == () and record.containers
    assert "resource-status" in caplog.text


def test_a_numa_entry_without_a_node_is_numa_node_zero_as_go_reads_it():
    status = '{"numaNodeResources": [{"resources": {"cpu": "4"}}]}'
    (allocation,) = parse_pod(_koordinator_pod_with_status(status)).allocations
    assert allocation.numa_resources == {0: {"cpu": 4000}}


def test_a_pod_cpu_alloc_without_namespace_or_name_is_kept():
    nrt = first(sample_items("node-koordinator-v1alpha1.json"), "NodeResourceTopology")
    nrt["metadata"]["annotations"]["node.koordinator.sh/pod-cpu-allocs"] = (
        '[{"uid": "pod", "cpuset": "1-3", "managedByKubelet": true}]'
    )
    (alloc,) = parse_nrt(nrt).koordlet.pod_cpu_allocs
    assert (alloc.uid, alloc.namespace, alloc.name) == ("pod", "", "")
    assert alloc.cpuset == frozenset({1, 2, 3})


@pytest.mark.parametrize(("value", "exclusive"), [("{}", True), ("false", False), ("true", True)])
def test_system_qos_cpus_are_exclusive_unless_said_otherwise(value, exclusive):
    nrt = first(sample_items("node-koordinator-v1alpha1.json"), "NodeResourceTopology")
    text = (
        '{"cpuset": "0-1"}' if value == "{}" else f'{{"cpuset": "0-1", "cpusetExclusive": {value}}}'
    )
    nrt["metadata"]["annotations"]["node.koordinator.sh/system-qos-resource"] = text
    assert parse_nrt(nrt).koordlet.system_qos_exclusive is exclusive


def test_a_sidecar_keeps_its_restart_policy():
    pod = _crane_pod_with_result("[]")
    sidecar = {"name": "proxy", "restartPolicy": "Always", "resources": {"requests": {"cpu": "2"}}}
    plain = {"name": "setup", "resources": {"requests": {"cpu": "4"}}}
    pod["spec"]["initContainers"] = [plain, sidecar]
    record = parse_pod(pod)
    assert [c.restart_policy for c in record.init_containers] == ["", "Always"]
    assert record.init_containers[1].as_dict()["restart_policy"] == "Always"


def test_crane_pod_topology_result_becomes_a_numa_allocation():
    items = sample_items("node-crane.json")
    pod = next(
        i
        for i in items
        if "topology.crane.io/topology-result" in i["metadata"].get("annotations", {})
    )
    record = parse_pod(pod)
    (allocation,) = record.allocations
    assert allocation.source == AllocationSource.CRANE
    assert allocation.cpuset is None
    assert sum(r["cpu"] for r in allocation.numa_resources.values()) > 0
    assert record.annotations["topology.crane.io/cpu-policy"] in {
        "exclusive",
        "numa",
        "none",
        "immovable",
    }


def _crane_pod_with_result(result: str) -> dict:
    pod = next(
        i
        for i in sample_items("node-crane.json")
        if "topology.crane.io/topology-result" in i["metadata"].get("annotations", {})
    )
    pod["metadata"]["annotations"]["topology.crane.io/topology-result"] = result
    return pod


def _crane_zone(name: str, cpu: str, zone_type: str | None = "Node") -> dict:
    zone = {"name": name, "resources": {"capacity": {"cpu": cpu}}}
    return zone if zone_type is None else {**zone, "type": zone_type}


@pytest.mark.parametrize(
    "result",
    [
        pytest.param("{not json", id="invalid-json"),
        pytest.param('{"name": "node0"}', id="not-a-list"),
        pytest.param(json.dumps([_crane_zone("node0", "lots")]), id="bad-quantity"),
        pytest.param(json.dumps([{"name": 0, "type": "Node"}]), id="name-not-a-string"),
    ],
)
def test_a_crane_result_crane_scheduler_cannot_read_is_ignored_and_the_pod_kept(result, caplog):
    record = parse_pod(_crane_pod_with_result(result))
    assert record.allocations == ()
    assert record.containers  # the pod, with its requests, stays in the mirror
    assert "topology.crane.io/topology-result" in caplog.text


def test_only_node_zones_named_as_crane_names_them_count_in_a_crane_result():
    zones = [
        _crane_zone("node0", "2"),
        _crane_zone("node1", "1", zone_type=None),  # no type: not a Node zone upstream
        _crane_zone("socket0", "4", zone_type="Socket"),
        _crane_zone("node01", "3"),  # crane-agent names zones node<N>: no zone has this name
    ]
    (allocation,) = parse_pod(_crane_pod_with_result(json.dumps(zones))).allocations
    assert allocation.numa_resources == {0: {"cpu": 2000}}


def test_a_zone_listed_twice_in_a_crane_result_counts_twice():
    zones = [_crane_zone("node1", "1"), _crane_zone("node1", "500m")]
    (allocation,) = parse_pod(_crane_pod_with_result(json.dumps(zones))).allocations
    assert allocation.numa_resources == {1: {"cpu": 1500}}


def test_koordinator_pod_resource_status_gives_cpuset_and_numa_resources():
    items = sample_items("node-koordinator-v1alpha1.json")
    pod = next(
        i
        for i in items
        if '"cpuset":"3,19"'
        in i["metadata"].get("annotations", {}).get("scheduling.koordinator.sh/resource-status", "")
    )
    (allocation,) = parse_pod(pod).allocations
    assert allocation.source == AllocationSource.KOORDINATOR
    assert allocation.cpuset == frozenset({3, 19})
    assert allocation.numa_resources == {0: {"cpu": 2000, "memory": 8 * 2**30}}


def test_reservations_in_every_phase():
    records = {r.name: r for r in map(parse_reservation, sample_items("reservations.json"))}
    available = records["resv-worker-03-web"]
    assert available.phase == ReservationPhase.AVAILABLE
    assert available.ttl_seconds == 12 * 3600
    assert available.allocate_once is False
    assert available.allocation.cpuset == frozenset({1, 2, 17, 18})
    assert available.allocatable == {"cpu": 4000, "memory": 8 * 2**30}
    assert {r.phase for r in records.values()} >= {"Available", "Pending", "Succeeded", "Failed"}
    assert records["resv-migrate-web"].allocate_once is True
    assert records["resv-batch-burst"].allocate_once is True  # the default


def test_qos_configmap_types_resctrl_and_keeps_the_rest():
    record = parse_qos_configmap(first(sample_items("slo-controller-config.json"), "ConfigMap"))
    cluster, node = record.strategies
    be = next(r for r in cluster.resctrl if r.qos_class == "beClass")
    assert (be.enable, be.cat_range_start_percent, be.cat_range_end_percent, be.mba_percent) == (
        True,
        0,
        30,
        100,
    )
    assert cluster.body["beClass"]["cpuQOS"] == {"enable": True, "groupIdentity": -1}
    assert "resctrlQOS" not in cluster.body["beClass"]
    assert node.name == "amd-epyc-nps4"
    assert node.node_selector["matchLabels"]["node.kubernetes.io/instance-type"]
    node_be = next(r for r in node.resctrl if r.qos_class == "beClass")
    assert render_resctrl(node_be) == {
        "enable": True,
        "catRangeStartPercent": 0,
        "catRangeEndPercent": 20,
        "mbaPercent": 50,
    }
    assert "colocation-config" in record.data
    assert "resource-qos-config" not in record.data  # held as typed strategies


def test_unknown_resctrl_keys_such_as_wrong_case_are_kept_verbatim():
    obj = first(sample_items("slo-controller-config.json"), "ConfigMap")
    obj["data"]["resource-qos-config"] = (
        '{"clusterStrategy": {"beClass": {"resctrlQOS": {"enable": true, "MBAPercent": 20}}}}'
    )
    (cluster,) = parse_qos_configmap(obj).strategies
    (be,) = cluster.resctrl
    assert be.mba_percent is None
    assert render_resctrl(be) == {"enable": True, "MBAPercent": 20}


def test_every_object_in_the_small_cluster_parses():
    parsed = [parse_object(item) for item in sample_items("cluster-small.json")]
    kinds = {p.kind for p in parsed if p is not None}
    assert kinds == {"Node", "NodeResourceTopology", "Pod", "Reservation", "QoSConfig"}


def _break(obj, path, value):
    target = obj
    *parents, last = path
    for key in parents:
        target = target[key]
    if value is _DELETE:
        del target[last]
    else:
        target[last] = value
    return obj


_DELETE = object()
_UPSTREAM = ("node-upstream-v1alpha2.json", "NodeResourceTopology")
_KOORD = ("node-koordinator-v1alpha1.json", "NodeResourceTopology")


@pytest.mark.parametrize(
    ("source", "path", "value", "field"),
    [
        pytest.param(_UPSTREAM, ("zones",), _DELETE, "zones", id="missing-zones"),
        pytest.param(
            _UPSTREAM,
            ("zones", 0, "resources", 0, "available"),
            "lots",
            "zones[0].resources[0].available",
            id="bad-quantity",
        ),
        pytest.param(_UPSTREAM, ("zones", 0, "name"), 7, "zones[0].name", id="wrong-type"),
        pytest.param(
            _UPSTREAM,
            ("apiVersion",),
            "topology.node.k8s.io/v9",
            "apiVersion",
            id="unknown-api-version",
        ),
        pytest.param(
            _KOORD,
            ("metadata", "annotations", "node.koordinator.sh/pod-cpu-allocs"),
            '[{"namespace":"a","name":"b","cpuset":"4-x"}]',
            "node.koordinator.sh/pod-cpu-allocs",
            id="bad-cpulist",
        ),
        pytest.param(
            _KOORD,
            ("metadata", "annotations", "node.koordinator.sh/cpu-topology"),
            '{"detail": [',
            "node.koordinator.sh/cpu-topology",
            id="bad-annotation-json",
        ),
        pytest.param(
            _KOORD,
            ("metadata", "annotations", "node.koordinator.sh/cpu-topology"),
            '{"detail": [{"id": 0, "core": 0, "socket": 0, "node": 0},'
            ' {"id": 0, "core": 1, "socket": 0, "node": 0}]}',
            "cpu-topology].detail[1]",
            id="cpu-listed-twice",
        ),
        pytest.param(
            _KOORD,
            ("metadata", "annotations", "node.koordinator.sh/cpu-topology"),
            '{"detail": [{"id": 0, "core": "zero", "socket": 0, "node": 0}]}',
            "cpu-topology].detail[0].core",
            id="cpu-row-wrong-type",
        ),
        pytest.param(
            ("node-crane.json", "Pod"),
            ("spec", "containers"),
            _DELETE,
            "spec.containers",
            id="pod-without-containers",
        ),
        pytest.param(
            ("node-crane.json", "Pod"),
            ("spec", "containers", 0, "resources"),
            {"limits": {"cpu": "lots"}},
            "spec.containers[0].resources.limits",
            id="pod-container-bad-quantity",
        ),
        pytest.param(
            ("node-crane.json", "Pod"),
            ("spec", "containers", 0, "name"),
            5,
            "spec.containers[0].name",
            id="pod-container-name-not-a-string",
        ),
        pytest.param(
            ("node-crane.json", "Pod"),
            ("metadata", "labels"),
            {"app": 5},
            "metadata.labels.app",
            id="pod-label-not-a-string",
        ),
        pytest.param(
            ("node-crane.json", "Pod"),
            ("spec", "priority"),
            True,
            "spec.priority",
            id="pod-priority-a-boolean",
        ),
        pytest.param(
            _UPSTREAM,
            ("zones", 0, "costs"),
            [{"name": "node-0", "value": 10}, {"name": "node-1", "value": "ten"}],
            "zones[0].costs[1].value",
            id="zone-cost-not-an-integer",
        ),
        pytest.param(
            _UPSTREAM,
            ("zones", 0, "resources", 0, "capacity"),
            _DELETE,
            "zones[0].resources[0].capacity",
            id="zone-resource-without-capacity",
        ),
        pytest.param(
            ("reservations.json", "Reservation"),
            ("spec", "ttl"),
            "forever",
            "spec.ttl",
            id="bad-ttl",
        ),
        pytest.param(
            ("reservations.json", "Reservation"),
            ("spec", "owners"),
            [],
            "spec.owners",
            id="no-owners",
        ),
        pytest.param(
            ("slo-controller-config.json", "ConfigMap"),
            ("data", "resource-qos-config"),
            '{"clusterStrategy": ',
            "resource-qos-config",
            id="invalid-qos-json",
        ),
    ],
)
def test_malformed_objects_name_the_object_and_field(source, path, value, field):
    obj = _break(first(sample_items(source[0]), source[1]), path, value)
    with pytest.raises(ObjectParseError) as caught:
        parse_object(obj)
    assert caught.value.name == obj["metadata"]["name"]
    assert field in caught.value.field
    with pytest.raises(ObjectParseError) as again:  # memoised parses must not hide it
        parse_object(obj)
    assert again.value.field == caught.value.field
    assert obj["metadata"]["name"] in str(caught.value)


def test_invalid_qos_json_reports_line_and_column():
    obj = first(sample_items("slo-controller-config.json"), "ConfigMap")
    obj["data"]["resource-qos-config"] = '{\n  "clusterStrategy": {,}\n}'
    with pytest.raises(ObjectParseError, match="line 2 column 23"):
        parse_object(obj)


def test_a_koordlet_nrt_read_at_v1alpha2_is_still_koordinator() -> None:
    """A CRD serving both versions returns koordlet's v1alpha1 object as v1alpha2."""
    obj = first(sample_items("node-koordinator-v1alpha1.json"), "NodeResourceTopology")
    as_v1alpha2 = {**obj, "apiVersion": "topology.node.k8s.io/v1alpha2"}
    v1 = parse_nrt(obj)
    v2 = parse_nrt(as_v1alpha2)
    assert v2.flavour == v1.flavour == Flavour.KOORDINATOR
    assert v2.koordlet == v1.koordlet
    assert v2.zones == v1.zones


def test_the_same_cpu_topology_text_parses_to_the_same_rows_every_time() -> None:
    """The well-formed parse is memoised by text; it must match the checked parse."""
    obj = first(sample_items("node-koordinator-v1alpha1.json"), "NodeResourceTopology")
    checked = _checked_cpu_topology(Reader(obj, "NodeResourceTopology"), annotations_of(obj))
    assert len(checked) > 0
    assert parse_nrt(obj).koordlet.cpus == parse_nrt(obj).koordlet.cpus == checked


def annotations_of(obj: dict) -> dict[str, str]:
    return obj["metadata"]["annotations"]
