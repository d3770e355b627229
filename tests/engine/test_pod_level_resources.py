"""Pod-level resources (spec.resources): what a pod requests, its QoS class, which
scheduler reads them, and the kubelet's static CPU manager skipping such a pod.

The PodRequests table is kubernetes component-helpers/resource/helpers_test.go
TestPodLevelResourceRequests (stored master after v1.35), ported as data; quantities in
base units (cpu in millicores, memory in bytes).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import pytest

from scheduler_api.engine.kubelet.cache import kubelet_pod_key
from scheduler_api.engine.kubelet.reference.admission import (
    POD_LEVEL_RESOURCES_NOT_PINNED,
    kubelet_pinning,
)
from scheduler_api.engine.model.kubernetes import (
    pod_level_requests_set,
    pod_level_resources_set,
    pod_request,
)
from scheduler_api.engine.model.snapshot import (
    ClusterSnapshot,
    ContainerSpec,
    NodeSnapshot,
    PodSpec,
    QoSClass,
    TopologyManagerPolicy,
    TopologyManagerScope,
)
from scheduler_api.engine.whatif.admission import pinned_admission
from scheduler_api.engine.whatif.evaluate import evaluate
from scheduler_api.engine.whatif.systems import (
    POD_LEVEL_SUPPORT,
    Scheduler,
    pod_level_note,
    reads_pod_level_requests,
)

MI = 2**20
GI = 2**30


@dataclass(frozen=True)
class RequestsCase:
    name: str
    pod_requests: dict[str, int] = field(default_factory=dict)
    containers: tuple[dict[str, int], ...] = ()
    init_containers: tuple[tuple[dict[str, int], str], ...] = ()  # (requests, restartPolicy)
    skip_pod_level: bool = False
    expected: dict[str, int] = field(default_factory=dict)


SMALL = {"memory": 3 * MI, "cpu": 2}
INIT = {"memory": 5 * MI, "cpu": 4}
LATER_INIT = {"memory": 6 * MI, "cpu": 8}

POD_REQUESTS_CASES = [
    RequestsCase("nil"),
    RequestsCase(
        "pod level memory resource with SkipPodLevelResources true",
        pod_requests={"memory": 2 * MI},
        skip_pod_level=True,
    ),
    RequestsCase(
        "pod level memory resource with SkipPodLevelResources false",
        pod_requests={"memory": 2 * MI},
        expected={"memory": 2 * MI},
    ),
    RequestsCase(
        "pod level memory and container level cpu resources",
        pod_requests={"memory": 2 * MI},
        containers=({"cpu": 2},),
        expected={"memory": 2 * MI, "cpu": 2},
    ),
    RequestsCase(
        "unsupported resource set at both pod-level and container-level",
        pod_requests={"storage": 2 * MI},
        containers=({"storage": 3 * MI},),
        expected={"storage": 3 * MI},
    ),
    RequestsCase(
        "unsupported resource set at pod-level only",
        pod_requests={"storage": 2 * MI},
        containers=({"memory": 3 * MI},),
        expected={"memory": 3 * MI},
    ),
    RequestsCase(
        "only container level resources set",
        containers=(SMALL,),
        expected=SMALL,
    ),
    RequestsCase(
        "both container-level and pod-level resources set",
        pod_requests={"memory": 6 * MI, "cpu": 8},
        containers=(SMALL,),
        expected={"memory": 6 * MI, "cpu": 8},
    ),
    RequestsCase(
        "container-level resources and init container set",
        containers=(SMALL,),
        init_containers=((INIT, ""),),
        expected=INIT,
    ),
    RequestsCase(
        "container-level resources and init container set with SkipPodLevelResources true",
        containers=(SMALL,),
        init_containers=((INIT, ""),),
        skip_pod_level=True,
        expected=INIT,
    ),
    RequestsCase(
        "container-level resources and sidecar container set",
        containers=(SMALL,),
        init_containers=((INIT, "Always"),),
        expected={"memory": 8 * MI, "cpu": 6},
    ),
    RequestsCase(
        "container-level resources, init and sidecar container set",
        containers=(SMALL,),
        init_containers=((INIT, "Always"), (LATER_INIT, "")),
        expected={"memory": 11 * MI, "cpu": 12},
    ),
    RequestsCase(
        "pod-level resources, container-level resources, init and sidecar container set",
        pod_requests={"memory": 15 * MI, "cpu": 18},
        containers=(SMALL,),
        init_containers=((INIT, "Always"), (LATER_INIT, "")),
        expected={"memory": 15 * MI, "cpu": 18},
    ),
    # ours: the scheduler that skips pod-level resources sums the containers instead
    RequestsCase(
        "pod-level and container-level resources with SkipPodLevelResources true",
        pod_requests={"memory": 6 * MI, "cpu": 8},
        containers=(SMALL,),
        skip_pod_level=True,
        expected=SMALL,
    ),
]


def case_pod(case: RequestsCase) -> PodSpec:
    containers = tuple(ContainerSpec(f"c{i}", r) for i, r in enumerate(case.containers))
    init = tuple(
        ContainerSpec(f"i{i}", r, restart_policy=policy)
        for i, (r, policy) in enumerate(case.init_containers)
    )
    resources = {"requests": case.pod_requests} if case.pod_requests else {}
    return PodSpec("ns", "p", containers=containers, init_containers=init, pod_resources=resources)


@pytest.mark.parametrize("case", POD_REQUESTS_CASES, ids=lambda c: c.name)
def test_pod_requests_follow_upstream(case: RequestsCase) -> None:
    assert pod_request(case_pod(case), pod_level=not case.skip_pod_level) == case.expected


def test_overhead_is_added_on_top_of_the_pod_level_requests() -> None:
    pod = PodSpec(
        "ns", "p", containers=(ContainerSpec("c", {"cpu": 500}),),
        overhead={"cpu": 100}, pod_resources={"requests": {"cpu": 2000}},
    )  # fmt: skip
    assert pod_request(pod) == {"cpu": 2100}
    assert pod_request(pod, pod_level=False) == {"cpu": 600}


@pytest.mark.parametrize(
    ("name", "resources", "requests_set", "resources_set"),
    [  # helpers_test.go TestIsPodLevelResourcesSet, and the requests-only variant
        ("unset", {}, False, False),
        ("only unsupported requests", {"requests": {"ephemeral-storage": MI}}, False, False),
        ("only unsupported limits", {"limits": {"ephemeral-storage": MI}}, False, False),
        (
            "unsupported and supported requests",
            {"requests": {"ephemeral-storage": MI, "cpu": 1}},
            True,
            True,
        ),
        (
            "unsupported and supported limits",
            {"limits": {"ephemeral-storage": MI, "cpu": 1}},
            False,
            True,
        ),
        ("hugepages requests", {"requests": {"hugepages-2Mi": 2 * MI}}, True, True),
    ],  # fmt: skip
)
def test_which_pod_level_resources_count_as_set(
    name: str, resources: dict[str, dict[str, int]], requests_set: bool, resources_set: bool
) -> None:
    pod = PodSpec("ns", "p", pod_resources=resources)
    assert (pod_level_requests_set(pod), pod_level_resources_set(pod)) == (
        requests_set,
        resources_set,
    )


CPU_MEM = {"cpu": 2000, "memory": GI}


@pytest.mark.parametrize(
    ("name", "resources", "container", "qos"),
    [  # qos.go ComputePodQOS / resourceQOS with spec.resources set
        (
            "pod-level requests equal limits",
            {"requests": CPU_MEM, "limits": CPU_MEM},
            {},
            QoSClass.GUARANTEED,
        ),
        (
            "pod-level requests below limits",
            {"requests": {"cpu": 1000, "memory": GI}, "limits": CPU_MEM},
            {},
            QoSClass.BURSTABLE,
        ),
        (
            "pod-level cpu only, requests equal limits",
            {"requests": {"cpu": 1000}, "limits": {"cpu": 1000}},
            {},
            QoSClass.BURSTABLE,
        ),
        ("pod-level requests without limits", {"requests": CPU_MEM}, {}, QoSClass.BURSTABLE),
        (
            "pod level decides over guaranteed containers",
            {"requests": {"cpu": 1000}},
            CPU_MEM,
            QoSClass.BURSTABLE,
        ),
        (
            "pod-level hugepages only: no cpu or memory",
            {"requests": {"hugepages-2Mi": 2 * MI}},
            CPU_MEM,
            QoSClass.BEST_EFFORT,
        ),
        ("unset: the containers decide", {}, CPU_MEM, QoSClass.GUARANTEED),
    ],  # fmt: skip
)
def test_the_qos_class_reads_the_pod_level_when_set(
    name: str, resources: dict[str, dict[str, int]], container: dict[str, int], qos: QoSClass
) -> None:
    pod = PodSpec(
        "ns", "p", containers=(ContainerSpec("c", container, container),), pod_resources=resources
    )
    assert pod.qos_class is qos


# --- which scheduler reads them ---------------------------------------------------------


def test_only_crane_sums_the_containers_at_node_level() -> None:
    assert {s for s in POD_LEVEL_SUPPORT if not reads_pod_level_requests(s)} == {Scheduler.CRANE}
    assert reads_pod_level_requests(Scheduler.AUTO)  # the default scheduler's answer


def test_scheduler_plugins_numa_plugin_ignores_them_but_its_node_fit_does_not() -> None:
    support = POD_LEVEL_SUPPORT[Scheduler.SCHEDULER_PLUGINS]
    assert (support.node_fit, support.topology) == (True, False)
    assert "sums the containers" in pod_level_note(Scheduler.SCHEDULER_PLUGINS)
    assert "Kubernetes 1.35" in pod_level_note(Scheduler.KOORDINATOR)
    assert "ignored" in pod_level_note(Scheduler.CRANE)


def roomy_node(name: str) -> NodeSnapshot:
    return NodeSnapshot(name, allocatable={"cpu": 8000, "memory": 32 * GI, "pods": 110})


def test_node_resources_fit_counts_the_pod_level_request_where_the_scheduler_reads_it() -> None:
    """Containers ask 1 CPU, the pod 16: the default scheduler counts 16 and refuses an
    8-CPU node; crane-scheduler (k8s.io/api v0.23) sees only the containers and binds."""
    pod = PodSpec(
        "ns", "p", containers=(ContainerSpec("c", {"cpu": 1000}),),
        pod_resources={"requests": {"cpu": 16000}},
    )  # fmt: skip
    snapshot = ClusterSnapshot((roomy_node("a"),))
    default = evaluate(snapshot, pod, scheduler="default")
    assert not default.nodes[0].fits
    assert [(r.resource, r.short_by) for r in default.nodes[0].reasons] == [("cpu", 8000)]
    crane = evaluate(snapshot, pod, scheduler="crane")
    assert not any(r.resource == "cpu" for r in crane.nodes[0].reasons)


# --- the kubelet: no exclusive CPUs for a pod with pod-level resources --------------------


def static_node() -> NodeSnapshot:
    return NodeSnapshot(
        "n",
        cpus=tuple((cpu, cpu, 0, 0) for cpu in range(8)),
        cpu_manager_policy="static",
        tm_policy=TopologyManagerPolicy.BEST_EFFORT,
        tm_scope=TopologyManagerScope.CONTAINER,
    )


def guaranteed(pod_resources: dict[str, dict[str, int]]) -> PodSpec:
    amounts = {"cpu": 2000, "memory": GI}
    container = ContainerSpec("app", requests=amounts, limits=amounts)
    return PodSpec("ns", "p", uid="u", containers=(container,), pod_resources=pod_resources)


def test_the_static_cpu_manager_skips_a_pod_with_pod_level_resources() -> None:
    plain = kubelet_pinning(static_node(), guaranteed({}))
    assert plain.cpuset is not None and len(plain.cpuset) == 2
    pod_level = guaranteed(
        {"requests": {"cpu": 2000, "memory": GI}, "limits": {"cpu": 2000, "memory": GI}}
    )
    assert pod_level.qos_class is QoSClass.GUARANTEED  # so only the guard keeps it unpinned
    pinning = kubelet_pinning(static_node(), pod_level)
    assert (pinning.cpuset, pinning.reason, pinning.note) == (
        None,
        None,
        POD_LEVEL_RESOURCES_NOT_PINNED,
    )
    admission = pinned_admission(static_node(), pod_level)
    assert admission.admitted and admission.cpuset is None
    assert "pod-level resources" in admission.reason


def test_the_kubelet_cache_tells_the_two_pods_apart() -> None:
    both = {"cpu": 2000, "memory": GI}
    assert kubelet_pod_key(guaranteed({})) != kubelet_pod_key(
        guaranteed({"requests": both, "limits": both})
    )
