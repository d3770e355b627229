"""The Topology Manager's configuration as scheduler-plugins reads it from the NRT and as
the kubelet parses its options.

Tables ported from kubernetes-sigs/scheduler-plugins (built on Kubernetes v1.35.7)
``pkg/noderesourcetopology/nodeconfig/topologymanager_test.go`` (TestConfigFromAttributes,
TestConfigFromPolicies, TestConfigFromNRT; upstream starts the first two from a zero
config, here every field left unset reads as its default: none / container / 8) and from
kubernetes ``pkg/kubelet/cm/topologymanager/policy_options_test.go`` (NewPolicyOptions).
"""

from __future__ import annotations

import pytest

from scheduler_api.engine import kubelet_rules, resolve_topology_manager
from scheduler_api.engine.kubelet.reference.admission import (
    kubelet_pinning,
)
from scheduler_api.engine.kubelet.reference.node_config import (
    allowed_numa_nodes,
    option_of_attribute,
    prefers_closest_numa_nodes,
)
from scheduler_api.engine.kubelet.reference.topologymanager import (
    TopologyManagerOptions,
    parse_topology_manager_options,
)
from scheduler_api.engine.model.snapshot import ContainerSpec, NodeSnapshot, PodSpec

DEFAULT = ("none", "container", 8)

# (description, topologyPolicies, attributes, (policy, scope, max NUMA nodes))
NRT_CASES = [
    # TestConfigFromAttributes
    ("attributes nil", [], {}, DEFAULT),
    ("no-policy", [], {"topologyManagerScope": "pod"}, ("none", "pod", 8)),
    ("no-scope", [], {"topologyManagerPolicy": "restricted"}, ("restricted", "container", 8)),
    (
        "complete-case-1",
        [],
        {"topologyManagerPolicy": "restricted", "topologyManagerScope": "container"},
        ("restricted", "container", 8),
    ),
    (
        "complete-case-2",
        [],
        {"topologyManagerScope": "pod", "topologyManagerPolicy": "single-numa-node"},
        ("single-numa-node", "pod", 8),
    ),
    (
        "error-case-1",
        [],
        {"topologyManagerScope": "Pod", "topologyManagerPolicy": "single-numa-node"},
        ("single-numa-node", "container", 8),
    ),
    (
        "error-case-2",
        [],
        {"topologyManagerScope": "Container", "topologyManagerPolicy": "restricted"},
        ("restricted", "container", 8),
    ),
    ("invalid-nodes-string", [], {"topologyManagerMaxNUMANodes": "A"}, DEFAULT),
    ("invalid-nodes-zero", [], {"topologyManagerMaxNUMANodes": "0"}, DEFAULT),
    ("invalid-nodes-negative", [], {"topologyManagerMaxNUMANodes": "-2"}, DEFAULT),
    ("valid-nodes", [], {"topologyManagerMaxNUMANodes": "16"}, ("none", "container", 16)),
    (
        "valid-nodes-upper-bound",
        [],
        {"topologyManagerMaxNUMANodes": "65535"},
        ("none", "container", 1024),
    ),
    # TestConfigFromPolicies
    ("policies empty", [], {}, DEFAULT),
    ("single-numa-pod", ["SingleNUMANodePodLevel"], {}, ("single-numa-node", "pod", 8)),
    (
        "single-numa-container",
        ["SingleNUMANodeContainerLevel"],
        {},
        ("single-numa-node", "container", 8),
    ),
    ("restricted-container", ["RestrictedContainerLevel"], {}, ("restricted", "container", 8)),
    (
        "skip-policies",
        ["RestrictedContainerLevel", "SingleNUMANodePodLevel"],
        {},
        ("restricted", "container", 8),
    ),
    ("error-unknown-policy", ["foobar"], {}, DEFAULT),
    # TestConfigFromNRT
    ("policies-single", ["BestEffortPodLevel"], {}, ("best-effort", "pod", 8)),
    (
        "policies-ignore-after-first",
        ["RestrictedContainerLevel", "BestEffortPodLevel"],
        {},
        ("restricted", "container", 8),
    ),
    (
        "attributes-partial-policy-only",
        [],
        {"topologyManagerPolicy": "restricted"},
        ("restricted", "container", 8),
    ),
    (
        "attributes-overrides-policy-partial",
        ["BestEffortPodLevel"],
        {"topologyManagerScope": "container"},
        ("best-effort", "container", 8),
    ),
    (
        "attributes-overrides-policy-full",
        ["BestEffortPodLevel"],
        {"topologyManagerScope": "container", "topologyManagerPolicy": "restricted"},
        ("restricted", "container", 8),
    ),
]


@pytest.mark.parametrize(
    ("policies", "attributes", "expected"), [pytest.param(*c[1:], id=c[0]) for c in NRT_CASES]
)
def test_resolve_topology_manager_reads_the_nrt_as_scheduler_plugins(
    policies, attributes, expected
) -> None:
    config = resolve_topology_manager(policies, attributes)
    assert (str(config.policy), str(config.scope), config.max_numa_nodes) == expected


ALPHA = "TopologyManagerPolicyAlphaOptions"

# NewPolicyOptions: (description, options, expected options or error text)
KUBELET_CASES = [
    (
        "return TopologyManagerOptions with PreferClosestNUMA set to true",
        {"prefer-closest-numa-nodes": "true"},
        TopologyManagerOptions(prefer_closest=True),
    ),
    (
        "return TopologyManagerOptions with MaxAllowableNUMANodes set to 12",
        {"max-allowable-numa-nodes": "12"},
        TopologyManagerOptions(max_allowable_numa_nodes=12),
    ),
    (
        "fail to set option when TopologyManagerPolicyAlphaOptions feature gate is not set",
        {"fancy-alpha-option": "true"},
        'unknown Topology Manager Policy option: "fancy-alpha-option"',
    ),
    (
        "return empty TopologyManagerOptions",
        {},
        TopologyManagerOptions(),
    ),
    ("fail to parse options", {"prefer-closest-numa-nodes": "not a boolean"}, "bad value"),
    (
        "fail to parse options with error PreferClosestNUMANodes",
        {"max-allowable-numa-nodes": "not a number"},
        "unable to convert policy option to integer",
    ),
    (
        "test beyond upper bound",
        {"max-allowable-numa-nodes": "1024"},
        TopologyManagerOptions(max_allowable_numa_nodes=1024),
    ),
    (
        "test less than the minimum number",
        {"max-allowable-numa-nodes": "7"},
        'the minimum value of "max-allowable-numa-nodes" should not be less than 8',
    ),
]


@pytest.mark.parametrize(
    ("options", "expected"), [pytest.param(*c[1:], id=c[0]) for c in KUBELET_CASES]
)
def test_new_policy_options_as_the_kubelet(options, expected) -> None:
    if isinstance(expected, TopologyManagerOptions):
        assert parse_topology_manager_options(options, {ALPHA: True}) == expected
    else:
        with pytest.raises(ValueError, match=expected):
            parse_topology_manager_options(options, {ALPHA: True})


@pytest.mark.parametrize(
    ("attribute", "option"),
    [
        ("topologyManagerOptionPreferClosestNumaNodes", "prefer-closest-numa-nodes"),
        ("topologyManagerOptionMaxAllowableNumaNodes", "max-allowable-numa-nodes"),
    ],
)
def test_option_attributes_name_the_kubelet_options(attribute, option) -> None:
    assert option_of_attribute(attribute) == option


# 16 CPUs on 16 NUMA nodes: more than the default 8
SIXTEEN_NUMA = tuple((cpu, cpu, 0, cpu) for cpu in range(16))


def _node(attributes: dict[str, str], **fields: object) -> NodeSnapshot:
    return NodeSnapshot(
        "n",
        cpus=SIXTEEN_NUMA,
        cpu_manager_policy="static",
        nrt_attributes={"topologyManagerPolicy": "best-effort", **attributes},
        **fields,  # type: ignore[arg-type]
    )


def _pod() -> PodSpec:
    amounts = {"cpu": 2000, "memory": 2**30}
    return PodSpec("ns", "p", containers=(ContainerSpec("app", amounts, amounts),))


def test_max_allowable_numa_nodes_published_as_an_option_lets_the_kubelet_start() -> None:
    refused = kubelet_pinning(_node({}), _pod())
    assert refused.reason is not None and "max-allowable-numa-nodes (8)" in refused.reason.message
    node = _node({"topologyManagerOptionMaxAllowableNumaNodes": "16"})
    assert allowed_numa_nodes(node) == 16
    assert kubelet_pinning(node, _pod()).cpuset is not None
    assert kubelet_rules(node)[1].endswith("max-allowable-numa-nodes=16")


def test_an_option_the_kubelet_refuses_means_it_does_not_start() -> None:
    node = _node({"topologyManagerOptionMaxAllowableNumaNodes": "4"})
    pinning = kubelet_pinning(node, _pod())
    assert pinning.reason is not None
    assert pinning.reason.message.startswith("kubelet would not start: the minimum value")
    unknown = kubelet_pinning(_node({"topologyManagerOptionPackTightly": "true"}), _pod())
    assert unknown.reason is not None and '"pack-tightly"' in unknown.reason.message


def test_prefer_closest_accepts_go_booleans_and_the_kubelet_config_wins() -> None:
    assert prefers_closest_numa_nodes(_node({"topologyManagerOptionPreferClosestNumaNodes": "1"}))
    kubelet_says_no = _node(
        {"topologyManagerOptionPreferClosestNumaNodes": "true"},
        tm_options={"prefer-closest-numa-nodes": "false"},
    )
    assert not prefers_closest_numa_nodes(kubelet_says_no)
