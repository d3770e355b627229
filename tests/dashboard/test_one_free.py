"""One meaning of "free" (issue 27 §4: NUMA 0 of epyc-nps4-01 read 36 free on the overview,
30 on the node map and "available 48" on the hover)."""

from __future__ import annotations

import pytest
from rest_framework.test import APIClient

from topology.choices import CPUState
from topology.demo import generate_demo_objects
from topology.models import Cluster, Node, NodeFigures
from topology.services.mirror.cpu_state import node_cpu_state
from topology.services.mirror.figures import recompute_figures
from topology.services.mirror.importer import import_objects

pytestmark = pytest.mark.django_db
FREE_FOR_EXCLUSIVE = (CPUState.FREE, CPUState.SHARED, CPUState.RESERVATION)


def test_the_overview_the_node_map_and_the_api_give_one_free_count(
    staff_client, django_user_model
) -> None:
    import_objects(cluster_name="demo", objects=generate_demo_objects())
    cluster = Cluster.objects.get(name="demo")
    recompute_figures(cluster_id=cluster.pk)
    node = Node.objects.select_related("topology").get(cluster=cluster, name="epyc-nps4-01")
    overview = NodeFigures.objects.get(node=node).free_cpus_by_zone
    state = node_cpu_state(node=node)
    api = APIClient()
    api.force_authenticate(django_user_model.objects.create_superuser("root", password=None))
    detail = api.get("/api/v1/clusters/demo/nodes/epyc-nps4-01").json()
    listed = detail["figures"]["free_cpus_by_zone"]
    page = staff_client.get(f"/c/demo/nodes/{node.name}/")
    assert page.status_code == 200
    for numa, free in overview.items():
        on_map = sum(
            1 for cpu in state.cpus if cpu.numa == int(numa) and cpu.state in FREE_FOR_EXCLUSIVE
        )
        assert on_map == free == listed[numa], numa
    assert "Free for an exclusive pod" in page.content.decode()
