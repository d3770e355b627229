"""Where a node's rules say scheduler-plugins read its Topology Manager policy: the
attribute only when scheduler-plugins takes it (an unknown value is ignored upstream,
nodeconfig.TopologyManagerFromNodeResourceTopology), else the deprecated field or none."""

from __future__ import annotations

import pytest

from scheduler_api.engine.model.snapshot import Flavour, NodeSnapshot
from scheduler_api.engine.whatif.rules import node_rules
from scheduler_api.engine.whatif.systems import Scheduler


@pytest.mark.parametrize(
    ("attribute", "policies", "line"),
    [
        pytest.param("restricted", (), "restricted/container (NRT attributes)", id="attribute"),
        pytest.param(
            "strict", ("SingleNUMANodePodLevel",),
            "single-numa-node/pod (NRT attribute topologyManagerPolicy='strict' ignored, "
            "NRT topologyPolicies, deprecated)",
            id="unknown-attribute-falls-back-to-the-field",
        ),
        pytest.param(
            "strict", (),
            "none/container (NRT attribute topologyManagerPolicy='strict' ignored, none assumed)",
            id="unknown-attribute-alone",
        ),
        pytest.param(
            "", ("Bogus",), "none/container (NRT topologyPolicies 'Bogus' not known: none assumed)",
            id="unknown-field",
        ),
        pytest.param("", (), "none/container (not published: none assumed)", id="nothing"),
    ],
)  # fmt: skip
def test_the_source_of_the_policy_is_the_one_scheduler_plugins_took(
    attribute: str, policies: tuple[str, ...], line: str
) -> None:
    attributes = {"topologyManagerPolicy": attribute} if attribute else {}
    node = NodeSnapshot(name="n", flavour=Flavour.UPSTREAM_V1ALPHA2,
                        nrt_attributes=attributes, topology_policies=policies)  # fmt: skip
    head = node_rules(node, Scheduler.SCHEDULER_PLUGINS)[0]
    assert head == f"NodeResourceTopologyMatch: topology-manager {line}"
