"""crane-scheduler's verdicts that whole groups of nodes share, decided without a zone.

A cluster what-if judges every Crane node one by one (`crane.evaluate`). For three
groups of nodes that passed the shared filters, Filter and Score answer the same
whatever the node's zones hold, so one node of each group is judged and its verdict
stands for the group:

* the pod has no container whose cpus crane-agent would pin (a DaemonSet pod,
  cpu-policy none, no container asking for whole cpus with limits equal): the plugin
  skips it on every node, which fits with score 0;
* otherwise, a node that publishes no Crane NRT is refused (crane judges it only when
  asked to judge every node, `scheduler=crane`);
* otherwise, a node whose crane cpuManagerPolicy is not Static fits with score 0.

The copies such a node takes alone are then what the shared filters admit
(`crane_count.fill_count` returns before reading a zone), and none on a refusal.
Every other Crane node is judged by the reference. Property tests hold every row to
`whatif_systems.judge_node` and to the copy-by-copy fill.
"""

from __future__ import annotations

import numpy as np

from scheduler_api.engine.crane import CraneConfig, evaluate, target_containers
from scheduler_api.engine.results import PlacementResult
from scheduler_api.engine.snapshot import PodSpec
from scheduler_api.engine.whatif_vector import Bools, NRTIndex


def skips_pod(pod: PodSpec, config: CraneConfig) -> bool:
    """PreFilter finds no container to pin: the plugin passes every node alike."""
    return pod.is_daemonset_pod or not target_containers(pod, config)


def shared_verdicts(
    index: NRTIndex, pod: PodSpec, rows: Bools, config: CraneConfig
) -> list[tuple[Bools, PlacementResult]]:
    """Groups of `rows` that share one verdict, each with it (see the module docstring).

    `rows` must be judged by Crane and have passed NodeUnschedulable and
    NodeResourcesFit. The groups are disjoint; rows in none are left to the reference.
    """
    if not rows.any():
        return []
    if skips_pod(pod, config):
        groups = [rows]
    else:
        crane = index.crane_nrt
        groups = [rows & ~crane, rows & crane & ~index.crane_static]
    shared = []
    for group in groups:
        members = np.flatnonzero(group)
        if len(members):
            node = index.nodes[int(members[0])]
            shared.append((group, evaluate(node, pod, config=config)))
    return shared
