"""scheduler-plugins filter_test.go tables, ported as data.

Sources: TestNodeResourceTopology, TestNodeResourceTopologyMultiContainerPodScope and
TestNodeResourceTopologyMultiContainerContainerScope (pkg/noderesourcetopology).
`want` is None for a fit, else the upstream Unschedulable message.
"""

from __future__ import annotations

import pytest

from scheduler_api.engine.model.snapshot import PodSpec, Zone
from tests.engine.data_nrt_builders import (
    container,
    guaranteed,
    nrt_node,
    nrt_zone,
    pod,
    requests_only,
)

CPU, MEM, HP2M = "cpu", "memory", "hugepages-2Mi"
NIC, NO_NIC = "vendor/nic1", "vendor/notexistingnic"
EXTENDED, NIC_NO_NUMA = "namespace/extended", "vendor.com/old-nic-model"
SNN_CONTAINER, SNN_POD = "SingleNUMANodeContainerLevel", "SingleNUMANodePodLevel"
POD_FAIL, CNT_FAIL, INIT_FAIL = (
    "cannot align pod",
    "cannot align container",
    "cannot align init container",
)


def _two_zones(
    z0: dict[str, tuple[str, str]], z1: dict[str, tuple[str, str]], second: int = 1
) -> tuple[Zone, Zone]:
    return (nrt_zone(0, z0), nrt_zone(second, z1))


NODES = {
    "node1": nrt_node(
        "node1",
        _two_zones(
            {CPU: ("20", "4"), MEM: ("8Gi", "8Gi"), NIC: ("30", "10")},
            {CPU: ("30", "8"), MEM: ("8Gi", "8Gi"), NIC: ("30", "10")},
        ),
        policies=[SNN_CONTAINER],
    ),
    "node2": nrt_node(
        "node2",
        _two_zones(
            {CPU: ("20", "2"), MEM: ("8Gi", "4Gi"), HP2M: ("128Mi", "128Mi"), NIC: ("30", "5")},
            {CPU: ("30", "4"), MEM: ("8Gi", "4Gi"), HP2M: ("128Mi", "128Mi"), NIC: ("30", "2")},
        ),
        policies=[SNN_CONTAINER],
        extra_allocatable={NIC_NO_NUMA: "4"},
    ),
    "node3": nrt_node(
        "node3",
        _two_zones(
            {CPU: ("20", "2"), MEM: ("8Gi", "4Gi"), NIC: ("30", "5")},
            {CPU: ("30", "4"), MEM: ("8Gi", "4Gi"), NIC: ("30", "2")},
        ),
        policies=[SNN_POD],
    ),
    "badly_formed_node": nrt_node(
        "badly_formed_node",
        _two_zones(
            {CPU: ("20", "2"), MEM: ("8Gi", "4Gi"), NIC: ("30", "5")},
            {CPU: ("30", "4"), MEM: ("8Gi", "4Gi"), NIC: ("30", "2")},
            second=75,
        ),
        policies=[SNN_POD],
    ),
    "extended": nrt_node(
        "extended",
        _two_zones(
            {CPU: ("20", "4"), MEM: ("8Gi", "8Gi"), NIC: ("30", "10")},
            {CPU: ("30", "8"), MEM: ("8Gi", "8Gi"), NIC: ("30", "10")},
        ),
        policies=[SNN_CONTAINER],
        extra_allocatable={EXTENDED: "1"},
    ),
}


def req_lim(requests: dict[str, str], limits: dict[str, str]) -> PodSpec:
    return pod(container("container1", requests, limits))


def req(requests: dict[str, str]) -> PodSpec:
    return pod(requests_only("container1", requests))


G = guaranteed
TOPOLOGY_CASES = [
    pytest.param(G({CPU: "2", MEM: "2Gi", EXTENDED: "1", NIC: "3"}), "extended", None,
                 id="guaranteed-extended-resource-fits"),
    pytest.param(G({CPU: "2", MEM: "2Gi", EXTENDED: "1"}), "extended", None,
                 id="guaranteed-extended-resource-no-devices-fits"),
    pytest.param(pod(), "node1", None, id="best-effort-fits"),
    pytest.param(G({NIC: "5"}), "node3", None, id="best-effort-devices-pod-scope-fits"),
    pytest.param(G({NIC: "20"}), "node3", POD_FAIL, id="best-effort-devices-pod-scope-no-fit"),
    pytest.param(G({NIC: "5"}), "node2", None, id="best-effort-devices-container-scope-fits"),
    pytest.param(G({NIC: "20"}), "node1", CNT_FAIL,
                 id="best-effort-devices-container-scope-no-fit"),
    pytest.param(G({EXTENDED: "1", NIC: "10"}), "extended", None,
                 id="best-effort-devices-and-extended-container-scope-fits"),
    pytest.param(req_lim({CPU: "3", MEM: "3Gi", NIC: "11"}, {CPU: "4", MEM: "4Gi", NIC: "11"}),
                 "node2", CNT_FAIL, id="burstable-devices-short-container-scope"),
    pytest.param(req_lim({CPU: "1", MEM: "1Gi", NIC: "6"}, {CPU: "2", MEM: "2Gi", NIC: "6"}),
                 "node3", POD_FAIL, id="burstable-devices-short-pod-scope"),
    pytest.param(req_lim({CPU: "1", MEM: "1Gi", NIC: "5"}, {CPU: "2", MEM: "2Gi", NIC: "5"}),
                 "node3", None, id="burstable-devices-enough-pod-scope"),
    pytest.param(req_lim({CPU: "19", MEM: "5Gi", NIC: "5"}, {CPU: "20", MEM: "6Gi", NIC: "5"}),
                 "node3", None, id="burstable-cpu-memory-beyond-numa-pod-scope-fits"),
    pytest.param(req_lim({CPU: "3", MEM: "3Gi", NIC: "5"}, {CPU: "4", MEM: "4Gi", NIC: "5"}),
                 "node2", None, id="burstable-devices-enough-container-scope"),
    pytest.param(req_lim({CPU: "5", MEM: "5Gi", NIC: "5"}, {CPU: "6", MEM: "6Gi", NIC: "5"}),
                 "node2", None, id="burstable-cpu-memory-beyond-numa-container-scope-fits"),
    pytest.param(G({CPU: "2", MEM: "2Gi"}), "node1", None, id="guaranteed-minimal-fits"),
    pytest.param(G({CPU: "8", MEM: "8Gi"}), "node1", None, id="guaranteed-saturating-zone-fits"),
    pytest.param(G({CPU: "2", MEM: "2Gi", HP2M: "0", NIC: "3"}), "node1", None,
                 id="guaranteed-zero-quantity-of-unavailable-resource-fits"),
    pytest.param(G({CPU: "2", MEM: "2Gi", NIC: "3"}), "node2", None, id="guaranteed-fits"),
    pytest.param(G({CPU: "2", MEM: "2Gi", HP2M: "64Mi", NIC: "3"}), "node2", None,
                 id="guaranteed-hugepages-fits"),
    pytest.param(G({CPU: "4", NIC: "3"}), "node2", None, id="burstable-fits"),
    pytest.param(G({CPU: "4", NIC: "11"}), "node2", CNT_FAIL,
                 id="burstable-cpu-devices-short-container-scope"),
    pytest.param(G({CPU: "2", NIC: "6"}), "node3", POD_FAIL,
                 id="burstable-cpu-devices-short-pod-scope"),
    pytest.param(G({CPU: "2", NIC: "5"}), "node3", None, id="burstable-cpu-devices-pod-scope-fits"),
    pytest.param(G({CPU: "20", NIC: "5"}), "node3", None,
                 id="burstable-cpu-beyond-numa-pod-scope-fits"),
    pytest.param(G({CPU: "2", NIC: "5"}), "node2", None,
                 id="burstable-cpu-devices-container-scope-fits"),
    pytest.param(G({CPU: "4", NIC: "5"}), "node2", None,
                 id="burstable-cpu-beyond-numa-container-scope-fits"),
    pytest.param(G({MEM: "2Gi", NIC: "11"}), "node2", CNT_FAIL,
                 id="burstable-memory-devices-short-container-scope"),
    pytest.param(G({MEM: "2Gi", NIC: "6"}), "node3", POD_FAIL,
                 id="burstable-memory-devices-short-pod-scope"),
    pytest.param(G({MEM: "2Gi", NIC: "5"}), "node3", None,
                 id="burstable-memory-devices-pod-scope-fits"),
    pytest.param(G({MEM: "5Gi", NIC: "5"}), "node3", None,
                 id="burstable-memory-beyond-numa-pod-scope-fits"),
    pytest.param(G({MEM: "4Gi", NIC: "5"}), "node2", None,
                 id="burstable-memory-devices-container-scope-fits"),
    pytest.param(G({MEM: "5Gi", NIC: "5"}), "node2", None,
                 id="burstable-memory-beyond-numa-container-scope-fits"),
    pytest.param(req({CPU: "4", MEM: "4Gi", NIC: "11"}), "node2", CNT_FAIL,
                 id="burstable-requests-only-devices-short-container-scope"),
    pytest.param(req({CPU: "2", MEM: "2Gi", NIC: "6"}), "node3", POD_FAIL,
                 id="burstable-requests-only-devices-short-pod-scope"),
    pytest.param(req({CPU: "2", MEM: "2Gi", NIC: "5"}), "node3", None,
                 id="burstable-requests-only-pod-scope-fits"),
    pytest.param(req({CPU: "20", MEM: "5Gi", NIC: "5"}), "node3", None,
                 id="burstable-requests-only-beyond-numa-pod-scope-fits"),
    pytest.param(req({CPU: "4", MEM: "4Gi", NIC: "5"}), "node2", None,
                 id="burstable-requests-only-container-scope-fits"),
    pytest.param(req({CPU: "5", MEM: "5Gi", NIC: "5"}), "node2", None,
                 id="burstable-requests-only-beyond-numa-container-scope-fits"),
    pytest.param(G({EXTENDED: "1", CPU: "4", NIC: "3"}), "extended", None,
                 id="burstable-extended-resources-fits"),
    pytest.param(G({CPU: "2", MEM: "2Gi", HP2M: "256Mi", NIC: "3"}), "node2", CNT_FAIL,
                 id="guaranteed-hugepages-short"),
    pytest.param(G({CPU: "9", MEM: "1Gi", NIC: "3"}), "node1", CNT_FAIL,
                 id="guaranteed-cpu-short"),
    pytest.param(G({CPU: "2", MEM: "1Gi", NO_NIC: "0"}), "node1", None,
                 id="guaranteed-zero-request-of-missing-device-fits"),
    pytest.param(G({CPU: "3", MEM: "1Gi", NO_NIC: "0"}, 3), "node3", POD_FAIL,
                 id="guaranteed-pod-scope-three-containers-short"),
    pytest.param(G({CPU: "1", MEM: "1Gi"}), "node3", None, id="guaranteed-pod-scope-minimal-fits"),
    pytest.param(G({CPU: "2", MEM: "4Gi"}), "badly_formed_node", None,
                 id="guaranteed-pod-scope-saturating-zone-fits"),
    pytest.param(G({CPU: "1", MEM: "1Gi", NO_NIC: "0"}, 3), "node3", None,
                 id="guaranteed-pod-scope-three-containers-fit"),
    pytest.param(G({CPU: "1", MEM: "1Gi", NO_NIC: "0"}, 3), "badly_formed_node", POD_FAIL,
                 id="guaranteed-pod-scope-zone-id-above-64-ignored"),
    pytest.param(G({CPU: "2", MEM: "2Gi", HP2M: "64Mi", NIC_NO_NUMA: "3"}), "node2", None,
                 id="guaranteed-non-numa-affine-nic-fits"),
    pytest.param(G({CPU: "2", MEM: "2Gi", "ephemeral-storage": "100Mi"}), "node2", None,
                 id="guaranteed-ephemeral-storage-is-host-level"),
]  # fmt: skip

HOST0_ZONES = (
    nrt_zone(0, {CPU: ("32", "30"), MEM: ("64Gi", "60Gi"), HP2M: ("384Mi", "384Mi"),
                 NIC: ("16", "16")}),
    nrt_zone(1, {CPU: ("32", "32"), MEM: ("64Gi", "64Gi"), HP2M: ("512Mi", "512Mi"),
                 NIC: ("32", "32")}),
)  # fmt: skip
HOST0_POD_SCOPE = nrt_node("host0", HOST0_ZONES, policies=[SNN_POD])
HOST0_CONTAINER_SCOPE = nrt_node("host0", HOST0_ZONES, policies=[SNN_CONTAINER])


def multi(*resources: dict[str, str]) -> PodSpec:
    return pod(*(container(f"cnt-{i + 1}", r) for i, r in enumerate(resources)))


MULTI_POD_SCOPE_CASES = [
    pytest.param(multi({CPU: "2", MEM: "2Gi"}, {CPU: "4", MEM: "8Gi"},
                       {CPU: "26", MEM: "32Gi", HP2M: "512Mi", NIC: "26"}), None,
                 id="gu-pod-fits-only-on-one-numa-node"),
    pytest.param(multi({CPU: "2", MEM: "2Gi"}, {CPU: "8", MEM: "8Gi"},
                       {CPU: "26", MEM: "26Gi", HP2M: "52Mi", NIC: "26"}), POD_FAIL,
                 id="gu-pod-not-enough-cpus-on-any-numa-node"),
    pytest.param(multi({CPU: "2", MEM: "4Gi"}, {CPU: "4", MEM: "16Gi"},
                       {CPU: "26", MEM: "52Gi", HP2M: "52Mi", NIC: "26"}), POD_FAIL,
                 id="gu-pod-not-enough-memory-on-any-numa-node"),
    pytest.param(multi({CPU: "2", MEM: "2Gi"}, {CPU: "4", MEM: "8Gi"},
                       {CPU: "26", MEM: "32Gi", HP2M: "3328Mi", NIC: "26"}), POD_FAIL,
                 id="gu-pod-not-enough-hugepages-on-any-numa-node"),
    pytest.param(multi({CPU: "2", MEM: "2Gi"}, {CPU: "4", MEM: "8Gi"},
                       {CPU: "26", MEM: "26Gi", HP2M: "52Mi", NIC: "52"}), POD_FAIL,
                 id="gu-pod-not-enough-devices-on-any-numa-node"),
]  # fmt: skip


def entry(init: list[dict[str, str]], app: list[dict[str, str]]) -> PodSpec:
    """parseTestUserEntry: requests == limits for init and app containers."""
    inits = [container(f"cnt-{i + 1}", r) for i, r in enumerate(init)]
    apps = [container(f"cnt-{i + 1}", r) for i, r in enumerate(app)]
    return pod(*apps, init=inits)


MULTI_CONTAINER_SCOPE_CASES = [
    pytest.param(entry([], [{CPU: "2", MEM: "4G"}]), None, id="1-tier3-single-container-fits"),
    pytest.param(entry([], [{CPU: "40", MEM: "4G"}]), CNT_FAIL, id="2-tier3-cpu-over-allocation"),
    pytest.param(entry([], [{CPU: "2", MEM: "100G"}]), CNT_FAIL,
                 id="2-tier3-memory-over-allocation"),
    pytest.param(entry([], [{CPU: "40", MEM: "100G"}]), CNT_FAIL,
                 id="2-tier3-cpu-and-memory-over-allocation"),
    pytest.param(entry([], [{CPU: "20", MEM: "40G"}, {CPU: "20", MEM: "40G"}]), None,
                 id="4-tier2-spread-across-numas-fits"),
    pytest.param(entry([], [{CPU: "2", MEM: "6G", HP2M: "500Mi", NIC: "16"},
                            {CPU: "2", MEM: "6G", HP2M: "50Mi", NIC: "8"}]), None,
                 id="4-tier1-devices-and-hugepages-spread-fits"),
    pytest.param(entry([{CPU: "40", MEM: "40G"}], [{CPU: "1", MEM: "4G"}, {CPU: "1", MEM: "4G"}]),
                 INIT_FAIL, id="7-tier1-init-cpu-over-allocation"),
    pytest.param(entry([{CPU: "4", MEM: "70G"}], [{CPU: "1", MEM: "4G"}, {CPU: "1", MEM: "4G"}]),
                 INIT_FAIL, id="7-tier1-init-memory-over-allocation"),
    pytest.param(entry([{CPU: "4", MEM: "10G"}], [{CPU: "20", MEM: "40G"}] * 2),
                 None, id="11-tier1-init-fits-containers-spread"),
    pytest.param(entry([{CPU: "4", MEM: "10G"}] * 3,
                       [{CPU: "20", MEM: "40G"}, {CPU: "20", MEM: "40G"}, {CPU: "6", MEM: "10G"}]),
                 None, id="17-tier1-multi-init-fits-containers-spread"),
    pytest.param(entry([{CPU: "30", MEM: "10G"}] * 2,
                       [{CPU: "20", MEM: "40G"}, {CPU: "20", MEM: "40G"}, {CPU: "20", MEM: "6G"}]),
                 CNT_FAIL, id="24-tier1-third-container-cpu-over-allocation"),
    pytest.param(entry([{CPU: "30", MEM: "10G"}] * 2, [{CPU: "35", MEM: "40G"}]), CNT_FAIL,
                 id="27-tier1-container-cpu-over-allocation"),
    pytest.param(entry([{CPU: "30", MEM: "10G"}] * 2,
                       [{CPU: "20", MEM: "40G"}, {CPU: "20", MEM: "40G"}]), None,
                 id="28-tier1-multi-init-and-containers-fit"),
    pytest.param(entry([{CPU: "30", MEM: "10G"}] * 3,
                       [{CPU: "20", MEM: "40G"}, {CPU: "20", MEM: "40G"}, {CPU: "2", MEM: "6G"}]),
                 None, id="29-tier1-init-cpu-sum-over-allocatable-still-fits"),
    pytest.param(entry([{CPU: "3", MEM: "50G"}] * 3,
                       [{CPU: "20", MEM: "40G"}, {CPU: "20", MEM: "40G"}, {CPU: "2", MEM: "6G"}]),
                 None, id="29-tier1-init-memory-sum-over-allocatable-still-fits"),
    pytest.param(entry([{CPU: "40", MEM: "50G"}, {CPU: "3", MEM: "50G"}, {CPU: "3", MEM: "50G"}],
                       [{CPU: "20", MEM: "40G"}, {CPU: "2", MEM: "6G"}]), INIT_FAIL,
                 id="32-tier1-first-init-cpu-over-allocation"),
    pytest.param(entry([{CPU: "20", MEM: "50G"}, {CPU: "40", MEM: "50G"}, {CPU: "3", MEM: "50G"}],
                       [{CPU: "20", MEM: "40G"}, {CPU: "2", MEM: "6G"}]), INIT_FAIL,
                 id="32-tier1-second-init-cpu-over-allocation"),
]  # fmt: skip
