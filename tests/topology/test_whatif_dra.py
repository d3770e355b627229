"""A what-if for a pod with DRA resource claims says the claims are not judged, and names
the nodes whose DRA devices (ResourceSlices) were not considered."""

from __future__ import annotations

from typing import Any

import pytest

from topology.demo import generate_demo_objects
from topology.models import Cluster
from topology.services.mirror.importer import import_objects
from topology.services.whatif.question import unjudged_constraints
from topology.services.whatif.service import run_whatif

NOT_JUDGED = "spec.resourceClaims (DRA resource claims are not judged yet)"


def pod(claims: bool) -> dict[str, Any]:
    amounts = {"cpu": "2", "memory": "2Gi"}
    spec: dict[str, Any] = {
        "containers": [{"name": "c", "resources": {"requests": amounts, "limits": amounts}}]
    }
    if claims:
        spec["resourceClaims"] = [{"name": "gpu", "resourceClaimTemplateName": "one-gpu"}]
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"}, "spec": spec}


CASES = [
    pytest.param(pod(False), ["gpu-1"], [], id="no-claims-no-word-of-dra"),
    pytest.param(pod(True), [], [NOT_JUDGED], id="claims-on-a-cluster-without-slices"),
    pytest.param(
        pod(True),
        ["gpu-1", "gpu-2"],
        [
            "spec.resourceClaims (DRA resource claims are not judged yet; the DRA devices "
            "ResourceSlices publish on gpu-1, gpu-2 were not considered)"
        ],
        id="claims-name-the-nodes-with-dra-devices",
    ),
    pytest.param(
        pod(True),
        [f"gpu-{n}" for n in range(7)],
        [
            "spec.resourceClaims (DRA resource claims are not judged yet; the DRA devices "
            "ResourceSlices publish on gpu-0, gpu-1, gpu-2, gpu-3, gpu-4 and 2 more were not "
            "considered)"
        ],
        id="at-most-five-nodes-named",
    ),
]


@pytest.mark.parametrize(("manifest", "dra_nodes", "expected"), CASES)
def test_the_not_judged_statement(manifest: dict, dra_nodes: list[str], expected: list) -> None:
    assert unjudged_constraints(manifest, dra_nodes) == expected


@pytest.mark.django_db
def test_an_answer_on_the_demo_names_its_dra_gpu_node() -> None:
    summary = import_objects(cluster_name="demo", objects=generate_demo_objects(nodes=4))
    assert summary.ok, summary.errors
    cluster = Cluster.objects.get(name="demo")
    answer = run_whatif(cluster=cluster, pod=pod(True))
    (statement,) = answer["judged_by"]["not_judged"]
    assert statement.startswith("spec.resourceClaims (DRA resource claims are not judged yet")
    assert "publish on intel-2s-01 were not considered" in statement
    assert run_whatif(cluster=cluster, pod=pod(False))["judged_by"]["not_judged"] == []
