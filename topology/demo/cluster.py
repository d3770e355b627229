"""The top level: plan the fleet, fill every node in its system's way, render objects."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any

from scheduler_api.engine import Flavour

from .capacity import build_ledger, koordinator_cpus
from .dra import dra_node, dra_objects
from .dra_cpu import cpu_slices
from .features import feature_plans
from .general_pods import add_daemonsets, add_finished_job, add_shared_pool_pods
from .koordinator import KoordinatorNode
from .koordinator_node import populate_koordinator
from .ledger import NodeLedger
from .memory_manager import add_memory_manager, dedicate
from .meta import NODES_CREATED, WORKLOADS_START, DemoContext
from .namespaces import namespaces_used, render_namespace
from .nodes import render_node
from .nrt_crane import render_crane_nrt
from .nrt_koordinator import render_koordinator_nrt
from .nrt_upstream import render_upstream_nrt
from .place_crane import SCHEDULER as CRANE_SCHEDULER
from .place_crane import finished_crane_result, populate_crane
from .place_upstream import SCHEDULER as TOPOLOGY_AWARE_SCHEDULER
from .place_upstream import populate_upstream
from .plan import NodePlan, plan_nodes
from .pods import OwnerKind, PodDraft, render_pod
from .problems import problem_objects
from .qos_config import render_slo_controller_config
from .reservations import ReservationDraft, ReservationRole, pending_reservation, render_reservation


@dataclass
class BuiltNode:
    ledger: NodeLedger
    pods: list[PodDraft] = field(default_factory=list)
    reservations: list[ReservationDraft] = field(default_factory=list)
    koordinator: KoordinatorNode | None = None


def generate_demo_objects(
    *, nodes: int = 40, seed: int = 0, cluster: str = "demo"
) -> list[dict[str, Any]]:
    """A realistic cluster as `kubectl get -o json` items; the same for the same arguments.

    Raises ValueError below four nodes: one node of each hardware shape is needed.
    """
    plans = feature_plans(plan_nodes(nodes))
    ctx = DemoContext.create(seed, cluster)
    roles = reservation_roles(plans)
    built = [build_node(ctx, plan, roles.get(plan.name, [])) for plan in plans]
    # After every node is built: no other node's pods change (later uids and times do).
    for node in built:
        if node.ledger.plan.memory_manager:
            node.pods = dedicate(node.ledger, node.pods)
            node.pods += add_memory_manager(ctx, node.ledger)
    objects: list[dict[str, Any]] = []
    topologies: list[dict[str, Any]] = []
    pods: list[dict[str, Any]] = []
    for node in built:
        node_object = render_node(
            ctx, node.ledger, node.koordinator.cpus if node.koordinator else None
        )
        objects.append(node_object)
        topologies.append(render_nrt(ctx, node, node_object["metadata"]["uid"]))
        pods += render_pods(ctx, node)
    largest = max(plan.shape.logical_cpus for plan in plans)
    reservations = [draft for node in built for draft in node.reservations]
    reservations.append(pending_reservation(ctx, len(plans), largest))
    objects += topologies + pods + [render_reservation(ctx, draft) for draft in reservations]
    objects.append(render_slo_controller_config(ctx))
    objects += problem_objects(ctx, plans)
    objects += dra_objects(ctx.cluster, dra_node(plans), pods)
    for plan in plans:
        if plan.uncore_caches:
            objects += cpu_slices(ctx.cluster, plan)
    names = sorted(namespaces_used(objects))
    return [render_namespace(ctx, name, ordinal) for ordinal, name in enumerate(names)] + objects


def reservation_roles(plans: list[NodePlan]) -> dict[str, list[ReservationRole]]:
    """Spread the Reservation scenarios over Koordinator nodes, at least one of each."""
    hosts = [plan.name for plan in plans if plan.flavour == Flavour.KOORDINATOR]
    roles: dict[str, list[ReservationRole]] = defaultdict(list)
    roles[hosts[0]] += [ReservationRole.AVAILABLE_PARTLY_USED, ReservationRole.WAITING]
    roles[hosts[1 % len(hosts)]].append(ReservationRole.SUCCEEDED)
    roles[hosts[2 % len(hosts)]] += [ReservationRole.FAILED, ReservationRole.AVAILABLE_UNUSED]
    extra = (
        ReservationRole.AVAILABLE_PARTLY_USED,
        ReservationRole.SUCCEEDED,
        ReservationRole.AVAILABLE_UNUSED,
    )
    for ordinal, host in enumerate(hosts[3:], start=3):
        role = extra[ordinal % 3]
        if role not in roles[host]:
            roles[host].append(role)
    return roles


def build_node(ctx: DemoContext, plan: NodePlan, roles: list[ReservationRole]) -> BuiltNode:
    ledger = build_ledger(plan)
    if plan.flavour == Flavour.KOORDINATOR:
        knode = KoordinatorNode(ledger, koordinator_cpus(plan))
        pods, reservations = populate_koordinator(ctx, knode, roles)
        return BuiltNode(ledger, pods, reservations, knode)
    pods = add_daemonsets(ctx, ledger)
    if plan.flavour == Flavour.CRANE:
        pods += populate_crane(ctx, ledger)
        pods += add_shared_pool_pods(ctx, ledger)
        pods += add_finished_job(
            ctx, CRANE_SCHEDULER, lambda draft: finished_crane_result(ctx, ledger, draft)
        )
    else:
        pods += populate_upstream(ctx, ledger)
        pods += add_shared_pool_pods(ctx, ledger)
        pods += add_finished_job(ctx, TOPOLOGY_AWARE_SCHEDULER)
    return BuiltNode(ledger, pods)


def render_nrt(ctx: DemoContext, node: BuiltNode, node_uid: str) -> dict[str, Any]:
    if node.koordinator is not None:
        return render_koordinator_nrt(ctx, node.koordinator, node_uid)
    if node.ledger.plan.flavour == Flavour.CRANE:
        return render_crane_nrt(ctx, node.ledger, node_uid)
    return render_upstream_nrt(ctx, node.ledger, node.pods)


def render_pods(ctx: DemoContext, node: BuiltNode) -> list[dict[str, Any]]:
    plan = node.ledger.plan
    rendered = []
    for ordinal, draft in enumerate(node.pods):
        if draft.owner_kind == OwnerKind.DAEMONSET:
            started = NODES_CREATED + timedelta(minutes=plan.index + 3)
        elif draft.terminated:
            started = ctx.minutes_after(WORKLOADS_START, 0, 600)
        else:
            started = ctx.minutes_after(WORKLOADS_START, 30, 4000)
        rendered.append(render_pod(ctx, draft, plan, ordinal, started))
    return rendered
