"""Snapshot values, pod helpers and the Go-compatible rendering helpers."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from scheduler_api.engine.model.results import (
    QuantityFormat,
    Reason,
    ReasonCheck,
    format_cpuset,
    format_quantity,
    parse_cpuset,
    quantity_format_of,
)
from scheduler_api.engine.model.snapshot import (
    ANN_CRANE_AWARENESS,
    ANN_CRANE_CPU_POLICY,
    ANN_KOORD_NUMA_SPEC,
    ANN_KOORD_RESOURCE_SPEC,
    ClusterSnapshot,
    ContainerSpec,
    KoordQoSClass,
    NodeSnapshot,
    OwnerRef,
    PodSpec,
    QoSClass,
    ReservationSnapshot,
    go_parse_bool,
)

ENGINE = Path(__file__).resolve().parents[2] / "scheduler_api" / "engine"
MINE = ["model/snapshot", "model/results", "schedulerplugins/reference/match",
        "crane/reference/plugin", "koordinator/reference/plugin", "koordinator/reference/cpu",
        "koordinator/reference/state", "koordinator/reference/reservation",
        "koordinator/reference/numa", "koordinator/reference/merge",
        "koordinator/reference/pod"]  # fmt: skip


def spec(*containers: ContainerSpec, init: tuple[ContainerSpec, ...] = (), **kw: object) -> PodSpec:
    return PodSpec("ns", "p", containers=containers, init_containers=init, **kw)  # type: ignore[arg-type]


def c(
    requests: dict[str, int] | None = None, limits: dict[str, int] | None = None
) -> ContainerSpec:
    return ContainerSpec("c", requests or {}, limits or {})


GU = {"cpu": 1000, "memory": 1024}


@pytest.mark.parametrize(
    ("pod", "want"),
    [
        pytest.param(spec(c()), QoSClass.BEST_EFFORT, id="no-requests-is-best-effort"),
        pytest.param(spec(c({"vendor/gpu": 1}, {"vendor/gpu": 1})), QoSClass.BEST_EFFORT,
                     id="devices-do-not-count"),
        pytest.param(spec(c({"cpu": 0}, {})), QoSClass.BEST_EFFORT, id="zero-requests-ignored"),
        pytest.param(spec(c(GU, GU)), QoSClass.GUARANTEED, id="requests-equal-limits"),
        pytest.param(spec(c(GU, {"cpu": 2000, "memory": 1024})), QoSClass.BURSTABLE,
                     id="limit-above-request"),
        pytest.param(spec(c({"cpu": 1000}, {"cpu": 1000})), QoSClass.BURSTABLE,
                     id="cpu-only-is-burstable"),
        pytest.param(spec(c(GU, GU), c(GU, GU)), QoSClass.GUARANTEED,
                     id="two-guaranteed-containers"),
        pytest.param(spec(c(GU, GU), init=(c({"cpu": 500}, {}),)), QoSClass.BURSTABLE,
                     id="init-container-without-limits"),
        pytest.param(spec(c(GU, GU), init=(c(GU, GU),)), QoSClass.GUARANTEED,
                     id="guaranteed-init-container"),
    ],
)  # fmt: skip
def test_qos_class_follows_kubernetes(pod: PodSpec, want: QoSClass) -> None:
    assert pod.qos_class is want


@pytest.mark.parametrize(
    ("annotations", "policy", "awareness"),
    [
        pytest.param({}, "", None, id="absent"),
        pytest.param({ANN_CRANE_CPU_POLICY: "exclusive", ANN_CRANE_AWARENESS: "true"}, "exclusive",
                     True, id="exclusive-aware"),
        pytest.param({ANN_CRANE_CPU_POLICY: "dedicated", ANN_CRANE_AWARENESS: "F"}, "", False,
                     id="unknown-policy-and-go-false"),
        pytest.param({ANN_CRANE_AWARENESS: "yes"}, "", None, id="unparsable-awareness-is-unset"),
    ],
)  # fmt: skip
def test_crane_annotations(
    annotations: dict[str, str], policy: str, awareness: bool | None
) -> None:
    pod = spec(c(), annotations=annotations)
    assert (pod.crane_cpu_policy, pod.crane_topology_awareness) == (policy, awareness)


def test_koordinator_annotations_and_labels() -> None:
    pod = spec(
        c(),
        labels={"koordinator.sh/qosClass": "LSR"},
        annotations={
            ANN_KOORD_RESOURCE_SPEC: '{"requiredCPUBindPolicy":"FullPCPUs",'
            '"preferredCPUExclusivePolicy":"PCPULevel"}',
            ANN_KOORD_NUMA_SPEC: '{"numaTopologyPolicy":"SingleNUMANode"}',
        },
    )
    assert pod.koord_qos_class is KoordQoSClass.LSR
    resource_spec = pod.koord_resource_spec
    assert resource_spec is not None
    assert resource_spec.required_cpu_bind_policy == "FullPCPUs"
    assert resource_spec.preferred_cpu_exclusive_policy == "PCPULevel"
    assert pod.koord_numa_topology_spec == ("SingleNUMANode", "")
    assert (
        spec(c(), labels={"koordinator.sh/qosClass": "Gold"}).koord_qos_class is KoordQoSClass.NONE
    )
    assert spec(c(), annotations={ANN_KOORD_RESOURCE_SPEC: "[1]"}).koord_resource_spec is None


def test_daemonset_pods_are_recognised_by_owner_kind() -> None:
    ds = spec(c(), owner_refs=(OwnerRef("apps/v1", "DaemonSet", "x", "u", True),))
    assert ds.is_daemonset_pod and not spec(c()).is_daemonset_pod


@pytest.mark.parametrize("text", ["1", "t", "T", "TRUE", "true", "True"])
def test_go_parse_bool_true(text: str) -> None:
    assert go_parse_bool(text) is True


def test_cluster_lookup_by_name() -> None:
    cluster = ClusterSnapshot(
        nodes=(NodeSnapshot("a"), NodeSnapshot("b")),
        reservations=(ReservationSnapshot("r", "u", node_name="b"),),
    )
    node = cluster.node("b")
    assert node is not None and node.name == "b"
    assert cluster.node("zz") is None
    assert [r.name for r in cluster.reservations_on("b")] == ["r"]


def test_node_label_helpers() -> None:
    labels = {
        "node.koordinator.sh/numa-topology-policy": "Restricted",
        "node.koordinator.sh/cpu-bind-policy": "FullPCPUsOnly",
    }
    node = NodeSnapshot("n", labels=labels)
    assert node.koord_numa_topology_policy_label == "Restricted"
    assert node.cpu_bind_policy_label == "FullPCPUsOnly"
    assert node.numa_allocate_strategy_label == ""


# --- Go rendering -------------------------------------------------------------------------

DSI, BSI, DEX = QuantityFormat.DECIMAL_SI, QuantityFormat.BINARY_SI, QuantityFormat.DECIMAL_EXPONENT


@pytest.mark.parametrize(
    ("value", "fmt", "milli", "text"),
    [
        pytest.param(4000, DSI, True, "4", id="4000m-is-4"),
        pytest.param(500, DSI, True, "500m", id="500m"),
        pytest.param(1500, DSI, True, "1500m", id="1500m-stays-milli"),
        pytest.param(4000, DSI, False, "4k", id="4000-decimal-is-4k"),
        pytest.param(4500, DSI, False, "4500", id="4500-decimal"),
        pytest.param(8 * 10**9, DSI, False, "8G", id="8G"),
        pytest.param(8 * 2**30, BSI, False, "8Gi", id="8Gi"),
        pytest.param(1024, BSI, False, "1Ki", id="1Ki"),
        pytest.param(2000, BSI, False, "2000", id="2000-binary-not-a-multiple"),
        pytest.param(512, BSI, False, "512", id="below-1024-binary-prints-decimal"),
        pytest.param(131846060 * 1024, BSI, False, "131846060Ki", id="sample-zone-memory"),
        pytest.param(4000, BSI, True, "4", id="binary-of-whole-millis"),
        pytest.param(4000, DEX, False, "4e3", id="decimal-exponent"),
        pytest.param(0, BSI, False, "0", id="zero"),
    ],
)
def test_format_quantity_is_canonical_go(
    value: int, fmt: QuantityFormat, milli: bool, text: str
) -> None:
    assert format_quantity(value, fmt, milli=milli) == text


@pytest.mark.parametrize(
    ("text", "fmt"),
    [("8Gi", BSI), ("500m", DSI), ("2", DSI), ("1e3", DEX), ("2E", DSI), ("128974848", DSI)],
)
def test_quantity_format_of(text: str, fmt: QuantityFormat) -> None:
    assert quantity_format_of(text) is fmt


@given(st.frozensets(st.integers(min_value=0, max_value=255)))
def test_cpuset_round_trips(cpus: frozenset[int]) -> None:
    assert parse_cpuset(format_cpuset(cpus)) == cpus


def test_cpuset_list_format() -> None:
    assert format_cpuset({0, 1, 2, 3, 8, 10, 11}) == "0-3,8,10-11"
    assert parse_cpuset("") == frozenset()


def test_reason_reads_as_a_sentence() -> None:
    assert str(Reason(ReasonCheck.SINGLE_NUMA_NODE, 1, "cpu", 2000)) == (
        "cpu short by 2 CPUs on zone 1; single-numa-node"
    )
    assert str(Reason(ReasonCheck.INSUFFICIENT_NUMA, 0, "memory", 2 * 2**30)) == (
        "memory short by 2Gi on zone 0; insufficient-numa"
    )
    assert str(
        Reason(ReasonCheck.POLICY_MISMATCH, message="node(s) NUMA Topology policy not match")
    ) == ("node(s) NUMA Topology policy not match; numa-topology-policy-mismatch")


@pytest.mark.parametrize("module", MINE)
def test_engine_module_imports_no_django(module: str) -> None:
    tree = ast.parse((ENGINE / f"{module}.py").read_text())
    imported = {
        alias.name
        for node in ast.walk(tree)
        if isinstance(node, ast.Import)
        for alias in node.names
    } | {node.module or "" for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)}
    assert not any(name.split(".")[0] in ("django", "rest_framework") for name in imported)
