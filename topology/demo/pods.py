"""Pod drafts (what the generator decides) and their rendering as v1 Pod objects."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from enum import StrEnum
from typing import Any

from scheduler_api.engine import ContainerSpec, PodSpec, QoSClass, pod_request, snapshot

from .meta import DemoContext, timestamp
from .nodes import node_ip, pod_ip
from .plan import NodePlan
from .quantity import format_resources

PRIORITIES = {
    "system-node-critical": 2_000_001_000,
    "koord-prod": 9000,
    "koord-mid": 7000,
    "koord-batch": 5000,
}


class OwnerKind(StrEnum):
    DAEMONSET = "DaemonSet"
    REPLICASET = "ReplicaSet"
    JOB = "Job"


class PodPhase(StrEnum):
    RUNNING = "Running"
    SUCCEEDED = "Succeeded"


@dataclass
class ContainerDraft:
    name: str
    image: str
    requests: dict[str, int] = field(default_factory=dict)
    limits: dict[str, int] = field(default_factory=dict)

    def render(self) -> dict[str, Any]:
        resources: dict[str, Any] = {}
        if self.requests:
            resources["requests"] = format_resources(self.requests)
        if self.limits:
            resources["limits"] = format_resources(self.limits)
        return {
            "name": self.name,
            "image": self.image,
            "imagePullPolicy": "IfNotPresent",
            "resources": resources,
            "terminationMessagePath": "/dev/termination-log",
            "terminationMessagePolicy": "File",
        }


def guaranteed(name: str, image: str, amounts: dict[str, int]) -> ContainerDraft:
    return ContainerDraft(name, image, dict(amounts), dict(amounts))


def _engine_container(draft: ContainerDraft) -> ContainerSpec:
    return ContainerSpec(draft.name, draft.requests, draft.limits)


@dataclass
class PodDraft:
    name: str
    uid: str
    namespace: str
    app: str
    owner_kind: OwnerKind
    owner_name: str
    owner_uid: str
    containers: list[ContainerDraft]
    init_containers: list[ContainerDraft] = field(default_factory=list)
    scheduler: str = "default-scheduler"
    priority_class: str | None = None
    labels: dict[str, str] = field(default_factory=dict)
    annotations: dict[str, str] = field(default_factory=dict)
    phase: PodPhase = PodPhase.RUNNING

    def spec_containers(self) -> dict[str, Any]:
        spec: dict[str, Any] = {}
        if self.init_containers:
            spec["initContainers"] = [container.render() for container in self.init_containers]
        spec["containers"] = [container.render() for container in self.containers]
        return spec

    def engine_pod(self) -> PodSpec:
        """The engine's pod of this draft (its amounts are base units already): what its
        requests and QoS class are read from, as for every mirrored pod."""
        return PodSpec(
            namespace=self.namespace,
            name=self.name,
            containers=tuple(map(_engine_container, self.containers)),
            init_containers=tuple(map(_engine_container, self.init_containers)),
        )

    def requests(self) -> dict[str, int]:
        return dict(pod_request(self.engine_pod()))

    def qos_class(self) -> QoSClass:
        return self.engine_pod().qos_class

    @property
    def terminated(self) -> bool:
        return self.phase != PodPhase.RUNNING


def new_pod(
    ctx: DemoContext,
    namespace: str,
    app: str,
    kind: OwnerKind,
    containers: list[ContainerDraft],
    **options: Any,
) -> PodDraft:
    scheduler = options.setdefault("scheduler", "default-scheduler")
    variant = f"{scheduler}/{options.pop('owner_variant', '')}"
    if kind == OwnerKind.JOB:
        owner_name, owner_uid = ctx.unique_name(namespace, app), ctx.uid()
        labels = {"app": app, "batch.kubernetes.io/job-name": owner_name, "job-name": owner_name}
        labels |= {"batch.kubernetes.io/controller-uid": owner_uid, "controller-uid": owner_uid}
    else:
        owner_name, owner_uid = ctx.owner(namespace, kind, app, variant)
        labels = _controller_labels(kind, app, owner_name)
    options["labels"] = labels | options.get("labels", {})
    name = ctx.unique_name(namespace, owner_name)
    return PodDraft(
        name, ctx.uid(), namespace, app, kind, owner_name, owner_uid, containers, **options
    )


def _controller_labels(kind: OwnerKind, app: str, owner_name: str) -> dict[str, str]:
    if kind == OwnerKind.DAEMONSET:
        revision = hashlib.sha256(owner_name.encode()).hexdigest()[:10]
        return {
            "app.kubernetes.io/name": app,
            "controller-revision-hash": revision,
            "pod-template-generation": "1",
        }
    return {"app": app, "pod-template-hash": owner_name.rsplit("-", 1)[1]}


def render_pod(
    ctx: DemoContext, draft: PodDraft, plan: NodePlan, ordinal: int, started: datetime
) -> dict[str, Any]:
    owner = {
        "apiVersion": "batch/v1" if draft.owner_kind == OwnerKind.JOB else "apps/v1",
        "kind": draft.owner_kind.value,
        "name": draft.owner_name,
        "uid": draft.owner_uid,
        "controller": True,
        "blockOwnerDeletion": True,
    }
    meta = ctx.metadata(
        draft.name,
        started,
        namespace=draft.namespace,
        uid=draft.uid,
        labels=draft.labels,
        annotations=_noted(draft),
        owner_references=[owner],
    )
    spec = _spec(draft, plan)
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": meta,
        "spec": spec,
        "status": _status(ctx, draft, spec, plan, ordinal, started),
    }


PLACED_BY_THE_DEMO = (
    "placed by the demo generator, which packs each node's pods by its own rules (node by "
    "node, in an order of its own), not as {scheduler} would place them one after another"
)


def _noted(draft: PodDraft) -> dict[str, str]:
    """The pod's annotations; a pod whose placement the demo publishes says who placed it
    (`snapshot.ANN_PLACEMENT_NOTE`): the agreement audit quotes it where the engine differs."""
    published = {snapshot.ANN_KOORD_RESOURCE_STATUS, snapshot.ANN_CRANE_RESULT} & set(
        draft.annotations
    )
    if not published:
        return draft.annotations
    note = PLACED_BY_THE_DEMO.format(scheduler=draft.scheduler or "its scheduler")
    return {**draft.annotations, snapshot.ANN_PLACEMENT_NOTE: note}


def _spec(draft: PodDraft, plan: NodePlan) -> dict[str, Any]:
    spec: dict[str, Any] = {"nodeName": plan.name, "schedulerName": draft.scheduler}
    spec |= draft.spec_containers()
    spec |= {
        "restartPolicy": "Never" if draft.owner_kind == OwnerKind.JOB else "Always",
        "terminationGracePeriodSeconds": 30,
        "dnsPolicy": "ClusterFirst",
        "serviceAccountName": "default",
        "enableServiceLinks": True,
        "preemptionPolicy": "PreemptLowerPriority",
        "priority": PRIORITIES.get(draft.priority_class or "", 0),
    }
    if draft.priority_class:
        spec["priorityClassName"] = draft.priority_class
    if draft.owner_kind == OwnerKind.DAEMONSET:
        spec["tolerations"] = [{"operator": "Exists"}]
    return spec


def _status(
    ctx: DemoContext,
    draft: PodDraft,
    spec: dict[str, Any],
    plan: NodePlan,
    ordinal: int,
    started: datetime,
) -> dict[str, Any]:
    running = not draft.terminated
    status: dict[str, Any] = {
        "phase": draft.phase.value,
        "qosClass": draft.qos_class().value,
        "hostIP": node_ip(plan),
        "hostIPs": [{"ip": node_ip(plan)}],
        "podIP": pod_ip(plan, ordinal),
        "podIPs": [{"ip": pod_ip(plan, ordinal)}],
        "startTime": timestamp(started),
        "conditions": _conditions(started, running),
    }
    if draft.init_containers:
        status["initContainerStatuses"] = [
            _container_status(ctx, container, started, running=False)
            for container in draft.init_containers
        ]
    status["containerStatuses"] = [
        _container_status(ctx, container, started, running=running)
        for container in draft.containers
    ]
    return status


def _conditions(started: datetime, running: bool) -> list[dict[str, Any]]:
    states = (
        ("PodReadyToStartContainers", running),
        ("Initialized", True),
        ("Ready", running),
        ("ContainersReady", running),
        ("PodScheduled", True),
    )
    conditions = []
    for kind, ok in states:
        condition: dict[str, Any] = {"type": kind, "status": "True" if ok else "False"}
        if not ok and kind in ("Ready", "ContainersReady"):
            condition["reason"] = "PodCompleted"
        condition |= {"lastTransitionTime": timestamp(started), "lastProbeTime": None}
        conditions.append(condition)
    return conditions


def _container_status(
    ctx: DemoContext, container: ContainerDraft, started: datetime, *, running: bool
) -> dict[str, Any]:
    if running:
        state: dict[str, Any] = {"running": {"startedAt": timestamp(started)}}
    else:
        finished = started + timedelta(minutes=3)
        state = {
            "terminated": {
                "exitCode": 0,
                "reason": "Completed",
                "startedAt": timestamp(started),
                "finishedAt": timestamp(finished),
            }
        }
    return {
        "name": container.name,
        "image": container.image,
        "imageID": f"{container.image}@sha256:{ctx.hex_digest()}",
        "ready": running,
        "restartCount": 0,
        "started": running,
        "containerID": f"containerd://{ctx.hex_digest()}",
        "state": state,
    }
