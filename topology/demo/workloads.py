"""The application catalogue: which teams run what, at which sizes.

Builders here return plain drafts; each system's module then adds its scheduler,
annotations and labels, and decides where the pod's resources sit.
"""

from __future__ import annotations

from dataclasses import dataclass

from scheduler_api.engine import Flavour

from .meta import DemoContext
from .plan import NodePlan
from .pods import ContainerDraft, OwnerKind, PodDraft, guaranteed, new_pod
from .quantity import CPU, GIB, GPU, MEMORY, MIB


@dataclass(frozen=True)
class AppProfile:
    namespace: str
    app: str
    image: str
    cpu_choices: tuple[int, ...]
    gib_per_cpu: int
    gpus: int = 0


GUARANTEED_APPS = (
    AppProfile("team-web", "web", "ghcr.io/acme/web:5.2.0", (2, 4, 6, 8), 2),
    AppProfile("team-web", "api", "ghcr.io/acme/api:2.3.1", (2, 4, 8), 4),
    AppProfile("team-data", "kafka", "docker.io/bitnami/kafka:3.7.0", (4, 8, 16), 4),
    AppProfile("team-data", "etl", "ghcr.io/acme/etl:1.9.4", (4, 8, 12, 16), 4),
    AppProfile("ml", "inference", "nvcr.io/nvidia/tritonserver:24.05-py3", (2, 4, 8), 4),
)
GPU_APPS = (
    AppProfile("ml", "trainer", "nvcr.io/nvidia/pytorch:24.05-py3", (16,), 6, gpus=2),
    AppProfile("ml", "llm-serving", "vllm/vllm-openai:v0.5.0", (8,), 8, gpus=1),
)
_BURSTABLE_APPS = (
    ("team-web", "frontend", "ghcr.io/acme/frontend:3.0.2"),
    ("team-web", "cache", "docker.io/library/redis:7.2"),
    ("team-data", "worker", "ghcr.io/acme/worker:1.4.0"),
    ("team-data", "metrics", "quay.io/prometheus/statsd-exporter:v0.26.1"),
)
_BEST_EFFORT_APPS = (
    ("default", "toolbox", "docker.io/library/busybox:1.36"),
    ("batch", "sleeper", "docker.io/library/alpine:3.20"),
)
ENVOY_IMAGE = "docker.io/envoyproxy/envoy:v1.30.2"
BUSYBOX_IMAGE = "docker.io/library/busybox:1.36"
_BURSTABLE_CPU = (250, 500, 1000, 1500, 2000)
_BURSTABLE_MEMORY = (512 * MIB, GIB, 2 * GIB, 4 * GIB)

_DAEMONSETS: dict[str, tuple[str, str, dict[str, int], dict[str, int]]] = {
    "kube-proxy": (
        "kube-system",
        "registry.k8s.io/kube-proxy:v1.30.4",
        {CPU: 100, MEMORY: 128 * MIB},
        {},
    ),
    "nfd-worker": (
        "node-feature-discovery",
        "registry.k8s.io/nfd/node-feature-discovery:v0.16.0",
        {CPU: 5, MEMORY: 64 * MIB},
        {MEMORY: 512 * MIB},
    ),
    "nfd-topology-updater": (
        "node-feature-discovery",
        "registry.k8s.io/nfd/node-feature-discovery:v0.16.0",
        {CPU: 50, MEMORY: 64 * MIB},
        {CPU: 100, MEMORY: 128 * MIB},
    ),
    "crane-agent": (
        "crane-system",
        "docker.io/gocrane/crane-agent:v0.11.0",
        {CPU: 500, MEMORY: 512 * MIB},
        {CPU: 1000, MEMORY: GIB},
    ),
    "koordlet": (
        "koordinator-system",
        "ghcr.io/koordinator-sh/koordlet:v1.5.0",
        {CPU: 0, MEMORY: 0},
        {CPU: 1000, MEMORY: GIB},
    ),
    "nvidia-device-plugin": ("kube-system", "nvcr.io/nvidia/k8s-device-plugin:v0.15.0", {}, {}),
}
_FLAVOUR_DAEMONSETS = {
    Flavour.UPSTREAM_V1ALPHA2: ("nfd-worker", "nfd-topology-updater"),
    Flavour.UPSTREAM_V1ALPHA1: ("nfd-worker", "nfd-topology-updater"),
    Flavour.CRANE: ("crane-agent",),
    Flavour.KOORDINATOR: ("koordlet",),
}


def daemonset_pods(ctx: DemoContext, plan: NodePlan) -> list[PodDraft]:
    names = ["kube-proxy", *_FLAVOUR_DAEMONSETS[plan.flavour]]
    if plan.shape.gpus:
        names.append("nvidia-device-plugin")
    pods = []
    for name in names:
        namespace, image, requests, limits = _DAEMONSETS[name]
        container = ContainerDraft(name, image, dict(requests), dict(limits))
        pods.append(
            new_pod(
                ctx,
                namespace,
                name,
                OwnerKind.DAEMONSET,
                [container],
                priority_class="system-node-critical",
            )
        )
    return pods


def guaranteed_pod(
    ctx: DemoContext,
    *,
    max_cpus: int,
    gpu_node: bool = False,
    even_cpus: bool = False,
    sidecars: bool = True,
    scheduler: str = "default-scheduler",
    owner_variant: str = "",
) -> PodDraft | None:
    """A Guaranteed pod with integer CPUs, or None when no profile is small enough."""
    rng = ctx.rng
    profile = rng.choice(GPU_APPS if gpu_node and rng.random() < 0.5 else GUARANTEED_APPS)
    sizes = [n for n in profile.cpu_choices if n <= max_cpus and (n % 2 == 0 or not even_cpus)]
    if not sizes:
        return None
    cpus = rng.choice(sizes)
    main = {CPU: cpus * 1000, MEMORY: cpus * profile.gib_per_cpu * GIB}
    if profile.gpus:
        main[GPU] = profile.gpus
    containers = [guaranteed(profile.app, profile.image, main)]
    if sidecars and not even_cpus and rng.random() < 0.25:
        containers.append(guaranteed("envoy", ENVOY_IMAGE, {CPU: 1000, MEMORY: 512 * MIB}))
    init = []
    if rng.random() < 0.2:
        init.append(guaranteed("init-config", BUSYBOX_IMAGE, {CPU: 1000, MEMORY: 256 * MIB}))
    options = {"init_containers": init, "scheduler": scheduler, "owner_variant": owner_variant}
    return new_pod(ctx, profile.namespace, profile.app, OwnerKind.REPLICASET, containers, **options)


def burstable_pod(ctx: DemoContext, scheduler: str = "default-scheduler") -> PodDraft:
    rng = ctx.rng
    namespace, app, image = rng.choice(_BURSTABLE_APPS)
    cpu, memory = rng.choice(_BURSTABLE_CPU), rng.choice(_BURSTABLE_MEMORY)
    limits = {CPU: cpu * 2, MEMORY: memory * 2} if rng.random() < 0.8 else {}
    containers = [ContainerDraft(app, image, {CPU: cpu, MEMORY: memory}, limits)]
    init = []
    if rng.random() < 0.15:
        # A schema migration that briefly needs more than the app itself.
        migrate = ContainerDraft(
            "migrate", image, {CPU: 2000, MEMORY: GIB}, {CPU: 2000, MEMORY: 2 * GIB}
        )
        init.append(migrate)
    kind = OwnerKind.REPLICASET
    return new_pod(ctx, namespace, app, kind, containers, init_containers=init, scheduler=scheduler)


def best_effort_pod(ctx: DemoContext) -> PodDraft:
    namespace, app, image = ctx.rng.choice(_BEST_EFFORT_APPS)
    return new_pod(ctx, namespace, app, OwnerKind.REPLICASET, [ContainerDraft(app, image)])


def finished_job_pod(ctx: DemoContext, scheduler: str) -> PodDraft:
    cpus = ctx.rng.choice((2, 4))
    amounts = {CPU: cpus * 1000, MEMORY: cpus * 4 * GIB}
    container = guaranteed("report", "ghcr.io/acme/report:4.1", amounts)
    return new_pod(ctx, "batch", "report", OwnerKind.JOB, [container], scheduler=scheduler)
