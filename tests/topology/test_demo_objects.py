"""The demo cluster generator: shapes, flavours and formats present, and numbers that add up.

Plain pytest, no database: `topology.demo` is pure Python.
"""

from __future__ import annotations

import copy
import json
from collections import Counter
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.demo_checks.invariants import check_demo_invariants
from topology.demo import generate_demo_objects
from topology.parsers.cpulist import format_cpulist, parse_cpulist

Objects = list[dict[str, Any]]


@pytest.fixture(scope="module")
def cluster() -> Objects:
    return generate_demo_objects()


def of_kind(objects: Objects, kind: str) -> list[dict[str, Any]]:
    return [obj for obj in objects if obj["kind"] == kind]


def annotations(obj: dict[str, Any]) -> dict[str, str]:
    return obj["metadata"].get("annotations", {})


def nrt_flavour(nrt: dict[str, Any]) -> str:
    if nrt["apiVersion"] == "topology.crane.io/v1alpha1":
        return "crane"
    if nrt["metadata"].get("labels", {}).get("app.kubernetes.io/managed-by") == "Koordinator":
        return "koordinator"
    return nrt["apiVersion"].rsplit("/", 1)[1]


# --- determinism and size ---------------------------------------------------------------


def test_it_is_deterministic_for_a_seed() -> None:
    first = generate_demo_objects(nodes=10, seed=7)
    second = generate_demo_objects(nodes=10, seed=7)
    assert json.dumps(first, sort_keys=True) == json.dumps(second, sort_keys=True)


def test_different_seeds_give_different_clusters() -> None:
    first = generate_demo_objects(nodes=10, seed=1)
    second = generate_demo_objects(nodes=10, seed=2)
    assert json.dumps(first, sort_keys=True) != json.dumps(second, sort_keys=True)


def test_node_names_depend_on_the_node_count_only() -> None:
    names = [
        [
            node["metadata"]["name"]
            for node in of_kind(generate_demo_objects(nodes=12, seed=seed), "Node")
        ]
        for seed in (0, 1)
    ]
    assert names[0] == names[1]
    assert {"intel-2s-01", "epyc-nps4-01", "small-01", "gpu-01"} <= set(names[0])


def test_another_cluster_name_keeps_the_layout_but_not_the_uids() -> None:
    first = generate_demo_objects(nodes=6, seed=3, cluster="east")
    second = generate_demo_objects(nodes=6, seed=3, cluster="west")
    assert [obj["metadata"]["name"] for obj in first] == [obj["metadata"]["name"] for obj in second]
    assert not {obj["metadata"]["uid"] for obj in first} & {
        obj["metadata"]["uid"] for obj in second
    }


def test_the_default_cluster_has_forty_nodes(cluster: Objects) -> None:
    assert len(of_kind(cluster, "Node")) == 40


@pytest.mark.parametrize("nodes", [0, 3])
def test_it_refuses_fewer_nodes_than_hardware_shapes(nodes: int) -> None:
    with pytest.raises(ValueError, match="one node of each hardware shape"):
        generate_demo_objects(nodes=nodes)


@pytest.mark.parametrize("nodes", [4, 10, 200])
def test_it_builds_every_size_asked_for(nodes: int) -> None:
    objects = generate_demo_objects(nodes=nodes, seed=nodes)
    assert len(of_kind(objects, "Node")) == nodes
    assert len(of_kind(objects, "NodeResourceTopology")) == nodes
    assert check_demo_invariants(objects) == []


# --- what the default cluster contains --------------------------------------------------


def test_every_hardware_shape_is_there(cluster: Objects) -> None:
    cpus_by_family: dict[str, set[str]] = {}
    for node in of_kind(cluster, "Node"):
        family = node["metadata"]["name"].rsplit("-", 1)[0]
        cpus_by_family.setdefault(family, set()).add(node["status"]["capacity"]["cpu"])
    assert cpus_by_family["intel-2s"] == {"112"}
    assert cpus_by_family["epyc-nps4"] == {"384"}
    assert cpus_by_family["small"] == {"16", "32"}
    assert cpus_by_family["gpu"] == {"128"}


def test_gpu_nodes_publish_their_gpus_per_zone(cluster: Objects) -> None:
    nrts = {nrt["metadata"]["name"]: nrt for nrt in of_kind(cluster, "NodeResourceTopology")}
    gpu_nodes = [
        node for node in of_kind(cluster, "Node") if "nvidia.com/gpu" in node["status"]["capacity"]
    ]
    assert gpu_nodes
    for node in gpu_nodes:
        assert node["status"]["allocatable"]["nvidia.com/gpu"] == "8"
        zones = nrts[node["metadata"]["name"]]["zones"]
        assert len(zones) == 4
        for zone in zones:
            gpu = next(row for row in zone["resources"] if row["name"] == "nvidia.com/gpu")
            assert gpu["capacity"] == "2"


def test_every_nrt_flavour_is_there(cluster: Objects) -> None:
    flavours = Counter(nrt_flavour(nrt) for nrt in of_kind(cluster, "NodeResourceTopology"))
    assert set(flavours) == {"v1alpha2", "v1alpha1", "crane", "koordinator"}


def test_upstream_nrts_mix_topology_manager_policies(cluster: Objects) -> None:
    upstream = [
        nrt for nrt in of_kind(cluster, "NodeResourceTopology") if nrt_flavour(nrt) == "v1alpha2"
    ]
    policies = {nrt["topologyPolicies"][0] for nrt in upstream}
    assert policies == {
        "SingleNUMANodePodLevel",
        "RestrictedContainerLevel",
        "BestEffortContainerLevel",
        "None",
    }
    for nrt in upstream:
        names = {attribute["name"] for attribute in nrt["attributes"]}
        assert {
            "topologyManagerPolicy",
            "topologyManagerScope",
            "nodeTopologyPodsFingerprint",
        } <= names
        assert all(zone["name"].startswith("node-") and zone["costs"] for zone in nrt["zones"])


def test_v1alpha1_nrts_have_policies_but_no_attributes(cluster: Objects) -> None:
    v1alpha1 = [
        nrt for nrt in of_kind(cluster, "NodeResourceTopology") if nrt_flavour(nrt) == "v1alpha1"
    ]
    assert v1alpha1
    assert all(nrt["topologyPolicies"] and "attributes" not in nrt for nrt in v1alpha1)


def test_crane_nrts_have_their_own_schema(cluster: Objects) -> None:
    crane = [nrt for nrt in of_kind(cluster, "NodeResourceTopology") if nrt_flavour(nrt) == "crane"]
    assert {nrt["craneManagerPolicy"]["topologyManagerPolicy"] for nrt in crane} == {
        "None",
        "SingleNUMANodePodLevel",
    }
    for nrt in crane:
        assert isinstance(nrt["attributes"], dict) and "reserved" in nrt
        zone0 = nrt["zones"][0]
        assert zone0["name"] == "node0"
        assert set(zone0["resources"]) == {"capacity", "allocatable", "reservedCPUNums"}


def test_nodes_carry_system_labels(cluster: Objects) -> None:
    labels = [node["metadata"]["labels"] for node in of_kind(cluster, "Node")]
    assert {label.get("topology.crane.io/topology-awareness") for label in labels} >= {
        "true",
        "false",
    }
    for key in (
        "node.koordinator.sh/numa-allocate-strategy",
        "node.koordinator.sh/numa-topology-policy",
        "node.koordinator.sh/cpu-bind-policy",
    ):
        assert any(key in label for label in labels), key


def test_koordinator_nrts_carry_koordlet_annotations(cluster: Objects) -> None:
    koordinator = [
        nrt for nrt in of_kind(cluster, "NodeResourceTopology") if nrt_flavour(nrt) == "koordinator"
    ]
    expected = {
        "node.koordinator.sh/cpu-topology",
        "node.koordinator.sh/cpu-shared-pools",
        "node.koordinator.sh/be-cpu-shared-pools",
        "node.koordinator.sh/pod-cpu-allocs",
        "kubelet.koordinator.sh/cpu-manager-policy",
        "node.koordinator.sh/reservation",
        "node.koordinator.sh/cpu-basic-info",
        "node.koordinator.sh/system-qos-resource",
    }
    for nrt in koordinator:
        assert expected <= set(annotations(nrt))
        assert nrt["metadata"]["ownerReferences"][0]["kind"] == "Node"
        for zone in nrt["zones"]:
            assert all(row["available"] == row["allocatable"] for row in zone["resources"])
    allocs = [
        json.loads(annotations(nrt)["node.koordinator.sh/pod-cpu-allocs"]) for nrt in koordinator
    ]
    assert None in allocs and any(allocs)
    vendors = {
        json.loads(annotations(nrt)["node.koordinator.sh/cpu-basic-info"])["vendorID"]
        for nrt in koordinator
    }
    assert vendors == {"GenuineIntel", "AuthenticAMD"}


def test_node_reservations_come_in_every_form(cluster: Objects) -> None:
    values = [
        json.loads(annotations(node)["node.koordinator.sh/reservation"])
        for node in of_kind(cluster, "Node")
        if "node.koordinator.sh/reservation" in annotations(node)
    ]
    assert any(set(value) == {"reservedCPUs"} for value in values)
    assert any(value.get("applyPolicy") == "ReservedCPUsOnly" for value in values)
    assert any(set(value) == {"resources"} for value in values)


def test_cpu_numbering_is_linux_like(cluster: Objects) -> None:
    nrt = next(
        nrt
        for nrt in of_kind(cluster, "NodeResourceTopology")
        if nrt_flavour(nrt) == "koordinator" and nrt["metadata"]["name"].startswith("epyc")
    )
    detail = json.loads(annotations(nrt)["node.koordinator.sh/cpu-topology"])["detail"]
    assert len(detail) == 384
    by_id = {cpu["id"]: cpu for cpu in detail}
    for cpu in range(192):
        assert by_id[cpu]["core"] == by_id[cpu + 192]["core"] == cpu
        assert by_id[cpu]["node"] == cpu // 24
        assert by_id[cpu]["socket"] == cpu // 96
    assert (
        format_cpulist(cpu for cpu, info in by_id.items() if info["node"] == 1) == "24-47,216-239"
    )


def test_pods_of_every_kind_are_there(cluster: Objects) -> None:
    pods = of_kind(cluster, "Pod")
    assert {pod["status"]["qosClass"] for pod in pods} == {"Guaranteed", "Burstable", "BestEffort"}
    # the Problems page's: a Pending pod and one the kubelet rejected (topology.demo.problems)
    assert {pod["status"]["phase"] for pod in pods} == {"Running", "Succeeded", "Pending", "Failed"}
    assert any(pod["spec"].get("initContainers") for pod in pods)
    koordinator_classes = {pod["metadata"]["labels"].get("koordinator.sh/qosClass") for pod in pods}
    assert {"LSE", "LSR", "LS", "BE"} <= koordinator_classes
    crane_policies = {annotations(pod).get("topology.crane.io/cpu-policy") for pod in pods}
    assert {"exclusive", "numa", "immovable", "none"} <= crane_policies
    assert any("topology.crane.io/topology-awareness" in annotations(pod) for pod in pods)
    assert any("scheduling.koordinator.sh/numa-topology-spec" in annotations(pod) for pod in pods)


def test_every_node_runs_its_daemonsets(cluster: Objects) -> None:
    daemons: dict[str, set[str]] = {}
    for pod in of_kind(cluster, "Pod"):
        if pod["metadata"]["ownerReferences"][0]["kind"] == "DaemonSet":
            daemons.setdefault(pod["spec"]["nodeName"], set()).add(
                pod["metadata"]["ownerReferences"][0]["name"]
            )
    assert len(daemons) == 40
    assert all("kube-proxy" in names for names in daemons.values())


def test_crane_results_and_koordinator_statuses_are_well_formed(cluster: Objects) -> None:
    for pod in of_kind(cluster, "Pod"):
        if result := annotations(pod).get("topology.crane.io/topology-result"):
            zones = json.loads(result)
            assert all(zone["type"] == "Node" and zone["name"].startswith("node") for zone in zones)
        if status := annotations(pod).get("scheduling.koordinator.sh/resource-status"):
            parsed = json.loads(status)
            parse_cpulist(parsed.get("cpuset", ""))
            assert parsed["numaNodeResources"]


def test_every_reservation_phase_and_owner_kind_is_there(cluster: Objects) -> None:
    reservations = of_kind(cluster, "Reservation")
    assert {resv["status"]["phase"] for resv in reservations} == {
        "Available",
        "Pending",
        "Succeeded",
        "Failed",
        "Waiting",
    }
    owner_kinds = {
        key for resv in reservations for owner in resv["spec"]["owners"] for key in owner
    }
    assert owner_kinds == {"object", "controller", "labelSelector"}
    assert {resv["spec"].get("allocateOnce") for resv in reservations} >= {True, False}
    assert any("expires" in resv["spec"] for resv in reservations)
    assert any("ttl" in resv["spec"] for resv in reservations)


def test_an_available_reservation_is_partly_used_by_a_pod(cluster: Objects) -> None:
    pods = {pod["metadata"]["uid"]: pod for pod in of_kind(cluster, "Pod")}
    partly = [
        resv
        for resv in of_kind(cluster, "Reservation")
        if resv["status"]["phase"] == "Available" and resv["status"].get("allocated")
    ]
    assert partly
    resv = partly[0]
    assert resv["status"]["allocated"] != resv["status"]["allocatable"]
    pod = pods[resv["status"]["currentOwners"][0]["uid"]]
    reference = json.loads(annotations(pod)["scheduling.koordinator.sh/reservation-allocated"])
    assert reference == {"name": resv["metadata"]["name"], "uid": resv["metadata"]["uid"]}
    reserved = parse_cpulist(
        json.loads(annotations(resv)["scheduling.koordinator.sh/resource-status"])["cpuset"]
    )
    used = parse_cpulist(
        json.loads(annotations(pod)["scheduling.koordinator.sh/resource-status"])["cpuset"]
    )
    assert used < reserved


def test_the_slo_controller_config_has_qos_classes_and_a_node_strategy(cluster: Objects) -> None:
    (config,) = of_kind(cluster, "ConfigMap")
    assert config["metadata"]["namespace"] == "koordinator-system"
    assert {"colocation-config", "resource-qos-config"} <= set(config["data"])
    qos = json.loads(config["data"]["resource-qos-config"])
    for qos_class in ("lsrClass", "lsClass", "beClass"):
        assert set(qos["clusterStrategy"][qos_class]["resctrlQOS"]) == {
            "enable",
            "catRangeStartPercent",
            "catRangeEndPercent",
            "mbaPercent",
        }
    selector = qos["nodeStrategies"][0]["nodeSelector"]["matchLabels"]
    assert any(
        all(node["metadata"]["labels"].get(key) == value for key, value in selector.items())
        for node in of_kind(cluster, "Node")
    )


def test_every_namespace_used_exists(cluster: Objects) -> None:
    namespaces = {ns["metadata"]["name"] for ns in of_kind(cluster, "Namespace")}
    used = {obj["metadata"]["namespace"] for obj in cluster if "namespace" in obj["metadata"]}
    assert used <= namespaces
    assert {"koordinator-system", "crane-system", "node-feature-discovery"} <= namespaces


def test_every_object_has_full_metadata(cluster: Objects) -> None:
    for obj in cluster:
        assert {"name", "uid", "resourceVersion", "creationTimestamp"} <= set(obj["metadata"]), obj[
            "kind"
        ]
    assert len({obj["metadata"]["uid"] for obj in cluster}) == len(cluster)


# --- the numbers add up ------------------------------------------------------------------


def test_the_default_cluster_is_consistent(cluster: Objects) -> None:
    assert check_demo_invariants(cluster) == []


@settings(max_examples=6, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(min_value=0, max_value=2**32 - 1), nodes=st.sampled_from([4, 5, 7, 12, 40]))
def test_numbers_add_up_for_any_seed_and_size(seed: int, nodes: int) -> None:
    assert check_demo_invariants(generate_demo_objects(nodes=nodes, seed=seed)) == []


# --- the checker catches broken objects ---------------------------------------------------


def first_nrt(objects: Objects, flavour: str) -> dict[str, Any]:
    return next(
        nrt for nrt in of_kind(objects, "NodeResourceTopology") if nrt_flavour(nrt) == flavour
    )


def test_it_catches_a_zone_whose_available_is_off(cluster: Objects) -> None:
    broken = copy.deepcopy(cluster)
    cpu = first_nrt(broken, "v1alpha2")["zones"][0]["resources"][0]
    cpu["available"] = str(int(cpu["available"]) - 1)
    assert any("in use" in problem for problem in check_demo_invariants(broken))


def test_it_catches_zones_that_no_single_numa_placement_explains(cluster: Objects) -> None:
    """Totals still add up, but one CPU moved between zones fits no pod-per-zone placement."""
    broken = copy.deepcopy(cluster)
    nrt = next(
        nrt
        for nrt in of_kind(broken, "NodeResourceTopology")
        if nrt_flavour(nrt) == "v1alpha2" and nrt["topologyPolicies"] == ["SingleNUMANodePodLevel"]
    )
    first, second = (zone["resources"][0] for zone in nrt["zones"][:2])
    first["available"] = str(int(first["available"]) + 1)
    second["available"] = str(int(second["available"]) - 1)
    problems = check_demo_invariants(broken)
    assert not any("in use" in problem for problem in problems)
    assert any("placement of the running pods" in problem for problem in problems)


def test_it_catches_two_cpusets_that_overlap(cluster: Objects) -> None:
    broken = copy.deepcopy(cluster)
    key = "scheduling.koordinator.sh/resource-status"
    by_node: dict[str, list[dict[str, Any]]] = {}
    for pod in of_kind(broken, "Pod"):
        status = annotations(pod).get(key, "")
        if (
            '"cpuset"' in status
            and pod["status"]["phase"] == "Running"
            and "reservation-allocated" not in str(annotations(pod))
        ):
            by_node.setdefault(pod["spec"]["nodeName"], []).append(pod)
    first, second = next(pods for pods in by_node.values() if len(pods) >= 2)[:2]
    second["metadata"]["annotations"][key] = first["metadata"]["annotations"][key]
    problems = check_demo_invariants(broken)
    assert any("both hold CPUs" in problem for problem in problems)


def test_it_catches_a_cpuset_on_reserved_cpus(cluster: Objects) -> None:
    broken = copy.deepcopy(cluster)
    nrt = next(
        nrt
        for nrt in of_kind(broken, "NodeResourceTopology")
        if nrt_flavour(nrt) == "koordinator"
        and json.loads(annotations(nrt)["node.koordinator.sh/reservation"]).get("reservedCPUs")
    )
    reserved = json.loads(annotations(nrt)["node.koordinator.sh/reservation"])["reservedCPUs"]
    pod = next(
        pod
        for pod in of_kind(broken, "Pod")
        if pod["spec"]["nodeName"] == nrt["metadata"]["name"]
        and '"cpuset"' in annotations(pod).get("scheduling.koordinator.sh/resource-status", "")
    )
    status = json.loads(annotations(pod)["scheduling.koordinator.sh/resource-status"])
    status["cpuset"] = reserved
    pod["metadata"]["annotations"]["scheduling.koordinator.sh/resource-status"] = json.dumps(status)
    assert any("reserved CPUs" in problem for problem in check_demo_invariants(broken))


def test_it_catches_zone_totals_that_miss_the_node_capacity(cluster: Objects) -> None:
    broken = copy.deepcopy(cluster)
    nrt = first_nrt(broken, "crane")
    nrt["zones"][0]["resources"]["capacity"]["cpu"] = "1"
    assert any("capacity sums to" in problem for problem in check_demo_invariants(broken))


def test_it_catches_crane_results_beyond_a_zone(cluster: Objects) -> None:
    broken = copy.deepcopy(cluster)
    pod = next(
        pod
        for pod in of_kind(broken, "Pod")
        if "topology.crane.io/topology-result" in annotations(pod)
        and pod["status"]["phase"] == "Running"
    )
    result = json.loads(annotations(pod)["topology.crane.io/topology-result"])
    result[0]["resources"]["capacity"]["cpu"] = "999"
    pod["metadata"]["annotations"]["topology.crane.io/topology-result"] = json.dumps(result)
    problems = check_demo_invariants(broken)
    assert any("over allocatable" in problem for problem in problems)
    assert any("the pod pins" in problem for problem in problems)


def test_it_catches_a_wrong_qos_class(cluster: Objects) -> None:
    broken = copy.deepcopy(cluster)
    pod = next(pod for pod in of_kind(broken, "Pod") if pod["status"]["qosClass"] == "Burstable")
    pod["status"]["qosClass"] = "Guaranteed"
    assert any("qosClass" in problem for problem in check_demo_invariants(broken))


def test_it_reports_a_malformed_object_instead_of_raising(cluster: Objects) -> None:
    broken = copy.deepcopy(cluster)
    nrt = first_nrt(broken, "koordinator")
    nrt["metadata"]["annotations"]["node.koordinator.sh/cpu-topology"] = "{not json"
    assert any("malformed" in problem for problem in check_demo_invariants(broken))
