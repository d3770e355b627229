"""The node page draws the node's DRA devices by NUMA node, next to the NRT zones."""

from __future__ import annotations

import html

import pytest
from django.urls import reverse

from tests.factories import ClusterFactory
from tests.topology.dra_objects import gpu, resource_claim, resource_slice, standard_numa
from topology.services.mirror.importer import import_objects

from .factories import upstream_node

pytestmark = pytest.mark.django_db


def node_page(client, node: str) -> str:
    response = client.get(reverse("topology:node", kwargs={"cluster": "prod", "node": node}))
    assert response.status_code == 200
    return html.unescape(response.content.decode())


def test_a_node_page_shows_its_dra_devices_by_numa_node_and_which_are_held(staff_client):
    cluster = ClusterFactory(name="prod")
    upstream_node(cluster, "gpu-1")
    upstream_node(cluster, "cpu-1")
    devices = [gpu("gpu-0", standard_numa(0)), gpu("gpu-1", standard_numa(1)), gpu("gpu-2")]
    summary = import_objects(
        cluster_name="prod",
        objects=[resource_slice("s1", devices), resource_claim("train", ["gpu-1"])],
    )
    assert summary.ok, summary.errors
    page = node_page(staff_client, "gpu-1")
    table = page[page.index('id="dra-devices"') :]
    table = table[: table.index("</table>")]
    assert "NUMA 0" in table and "(zone node-0)" in table
    assert table.index("NUMA 1") < table.index("NUMA unknown")
    assert "held</strong> by claim <code>ml/train</code> (pod ml/trainer-0)" in table
    assert table.count("<td>free</td>") == 2
    assert "80.0 GiB" in table and "Example GPU 80GB" in table
    assert 'id="dra-devices"' not in node_page(staff_client, "cpu-1")
