"""The what-if form: container rows and knobs become the API's Pod manifest; bad input is a
field error; a pasted YAML or JSON manifest replaces the rows."""

from __future__ import annotations

import json

import pytest
import yaml
from django.http import QueryDict
from django.test import override_settings

from topology.forms.whatif import WhatIfForms
from topology.services.whatif.manifest import compact_pod_manifest
from topology.services.whatif.service import WhatIfInputError

EXCLUSIVE_16 = {
    "c1-cpu_request": "16",
    "c1-cpu_limit": "16",
    "c1-memory_request": "32Gi",
    "c1-memory_limit": "32Gi",
}


def forms_for(data: dict[str, str]) -> WhatIfForms:
    query = QueryDict(mutable=True)
    query.update(data)
    return WhatIfForms(query)


def valid_question(data: dict[str, str]):
    forms = forms_for(data)
    assert forms.is_valid(), (forms.pod.errors, [row.errors for row in forms.rows])
    return forms.question()


def test_a_query_without_form_fields_leaves_the_form_unbound():
    forms = forms_for({"page": "2", "cores": "node-1"})
    assert not forms.bound and not forms.is_valid()
    assert forms.pod.errors == {} and forms.non_field_errors() == []


def test_an_empty_submission_asks_for_a_container():
    forms = forms_for({"scheduler": "auto", "c1-cpu_request": ""})
    assert forms.bound and not forms.is_valid()
    assert forms.non_field_errors() == ["Describe at least one container, or paste a Pod manifest."]


def test_the_rows_become_the_manifest_the_api_builds_from_the_same_answers():
    question = valid_question(
        {
            **EXCLUSIVE_16,
            "c1-name": "db",
            "crane_cpu_policy": "exclusive",
            "crane_topology_awareness": "false",
            "koordinator_qos_class": "LSR",
            "koordinator_cpu_bind_policy": "FullPCPUs",
            "koordinator_cpu_bind_required": "on",
            "koordinator_cpu_exclusive_policy": "PCPULevel",
        }
    )
    api_body = {
        "containers": [
            {
                "name": "db",
                "requests": {"cpu": "16", "memory": "32Gi"},
                "limits": {"cpu": "16", "memory": "32Gi"},
            }
        ],
        "crane_cpu_policy": "exclusive",
        "crane_topology_awareness": False,
        "koordinator_qos_class": "LSR",
        "koordinator_cpu_bind_policy": "FullPCPUs",
        "koordinator_cpu_bind_required": True,
        "koordinator_cpu_exclusive_policy": "PCPULevel",
    }
    assert question.pod == compact_pod_manifest(api_body)
    assert question.pod["metadata"]["labels"] == {"koordinator.sh/qosClass": "LSR"}
    assert json.loads(
        question.pod["metadata"]["annotations"]["scheduling.koordinator.sh/resource-spec"]
    ) == {"requiredCPUBindPolicy": "FullPCPUs", "preferredCPUExclusivePolicy": "PCPULevel"}


def test_unset_knobs_write_no_annotation_and_options_have_defaults():
    question = valid_question(EXCLUSIVE_16)
    assert question.pod["metadata"]["annotations"] == {}
    assert question.pod["metadata"]["labels"] == {}
    assert (question.replicas, question.scheduler, question.scoring, question.weights) == (
        1,
        "auto",
        None,
        None,
    )
    assert not question.from_manifest


def test_blank_rows_are_ignored_and_rows_are_named_by_position():
    question = valid_question(
        {"c1-cpu_request": "1", "c2-cpu_request": "", "c3-memory_limit": "1Gi"}
    )
    containers = question.pod["spec"]["containers"]
    assert [c["name"] for c in containers] == ["container-1", "container-3"]
    assert containers[1]["resources"] == {"limits": {"memory": "1Gi"}}


def test_hugepages_and_devices_are_requested_and_limited_alike():
    question = valid_question(
        {
            **EXCLUSIVE_16,
            "c1-hugepages_2mi": "1Gi",
            "c1-hugepages_1gi": "2Gi",
            "c1-device_name": "nvidia.com/gpu",
            "c1-device_count": "2",
        }
    )
    resources = question.pod["spec"]["containers"][0]["resources"]
    for kind in ("requests", "limits"):
        assert resources[kind]["hugepages-2Mi"] == "1Gi"
        assert resources[kind]["hugepages-1Gi"] == "2Gi"
        assert resources[kind]["nvidia.com/gpu"] == "2"


@pytest.mark.parametrize(
    ("data", "field", "message"),
    [
        ({"c1-cpu_request": "lots"}, "cpu_request", "is not a Kubernetes quantity"),
        ({"c1-memory_limit": "-1Gi"}, "memory_limit", "is negative"),
        ({"c1-cpu_request": "4", "c1-cpu_limit": "2"}, "cpu_request", "must not exceed the limit"),
        ({"c1-device_name": "nvidia.com/gpu"}, "device_count", "give both"),
        ({"c1-device_count": "1"}, "device_name", "give both"),
        (
            {"c1-device_name": "kubernetes.io/batch-cpu", "c1-device_count": "1"},
            "device_name",
            "extended resource",
        ),
        ({"c1-device_name": "gpu", "c1-device_count": "1"}, "device_name", "extended resource"),
        ({"c1-name": "Not_A_Label", "c1-cpu_request": "1"}, "name", "DNS label"),
        (
            {"c1-device_name": "nvidia.com/gpu", "c1-device_count": "0"},
            "device_count",
            "greater than or equal to 1",
        ),
    ],
)
def test_a_bad_container_value_is_an_error_on_its_field(data, field, message):
    forms = forms_for(data)
    assert not forms.is_valid()
    assert message in " ".join(forms.rows[0].errors[field])


def test_two_containers_with_one_name_are_refused():
    forms = forms_for(
        {"c1-name": "app", "c1-cpu_request": "1", "c2-name": "app", "c2-cpu_request": "1"}
    )
    assert not forms.is_valid()
    assert forms.rows[1].errors["name"] == ["another container is already named app"]


@pytest.mark.parametrize(
    ("data", "field", "message"),
    [
        ({"replicas": "-1"}, "replicas", "greater than or equal to 0"),
        ({"replicas": "17"}, "replicas", "at most 16 on this page"),
        ({"replicas": "two"}, "replicas", "Enter a whole number"),
        ({"scheduler": "kube-scheduler"}, "scheduler", "Select a valid choice"),
        ({"scoring": "Random"}, "scoring", "Select a valid choice"),
        ({"weights": "cpu=0"}, "weights", "is not resource=weight"),
        ({"crane_cpu_policy": "pinned"}, "crane_cpu_policy", "Select a valid choice"),
        ({"koordinator_qos_class": "gold"}, "koordinator_qos_class", "Select a valid choice"),
    ],
)
@override_settings(API_WHATIF_SYNC_MAX_REPLICAS=16)
def test_a_bad_option_is_an_error_on_its_field(data, field, message):
    forms = forms_for({**EXCLUSIVE_16, **data})
    assert not forms.is_valid()
    assert message in " ".join(forms.pod.errors[field])


def test_options_are_carried_into_the_question():
    question = valid_question(
        {
            **EXCLUSIVE_16,
            "replicas": "3",
            "scheduler": "koordinator",
            "scoring": "MostAllocated",
            "weights": "cpu=2, memory=1",
        }
    )
    assert (question.replicas, question.scheduler, question.scoring) == (
        3,
        "koordinator",
        "MostAllocated",
    )
    assert question.weights == {"cpu": 2, "memory": 1}


YAML_POD = """
apiVersion: v1
kind: Pod
metadata: {name: db, labels: {koordinator.sh/qosClass: LSR}}
spec:
  containers:
  - name: db
    resources:
      limits: {cpu: "8", memory: 16Gi}
"""


@pytest.mark.parametrize("text", [YAML_POD, None])
def test_a_pasted_yaml_or_json_manifest_replaces_the_rows(text):
    manifest = yaml.safe_load(YAML_POD)
    pasted = text if text is not None else json.dumps(manifest)
    question = valid_question({**EXCLUSIVE_16, "manifest": pasted, "koordinator_qos_class": "LS"})
    assert question.from_manifest
    assert question.pod == manifest  # taken as written: rows and knobs are not used


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("kind: [", "cannot read the manifest at line 1"),
        ("- a\n- b", "expected a Pod manifest"),
        ("kind: Deployment", "expected kind Pod, got 'Deployment'"),
        ("kind: Pod\n---\nkind: Pod", "expected one Pod manifest, found 2 documents"),
        ("x" * 6001, "at most 6000 characters"),
    ],
)
def test_a_manifest_that_is_not_one_pod_is_a_manifest_error(text, message):
    forms = forms_for({"manifest": text})
    assert not forms.is_valid()
    assert message in " ".join(forms.pod.errors["manifest"])


def test_the_services_errors_land_next_to_the_fields_they_are_about():
    forms = forms_for({**EXCLUSIVE_16, "c2-cpu_request": "1"})
    assert forms.is_valid()
    forms.add_input_errors(
        WhatIfInputError(
            {
                "weights": ["must map resource names to whole numbers ≥ 1"],
                "pod.spec.containers[1].resources.limits": ["bad"],
                "pod.metadata.name": ["too long"],
            }
        )
    )
    assert forms.pod.errors["weights"] == ["must map resource names to whole numbers ≥ 1"]
    assert forms.rows[1].non_field_errors() == ["spec.containers[1].resources.limits: bad"]
    assert forms.non_field_errors() == ["metadata.name: too long"]


def test_with_a_manifest_the_services_pod_errors_go_to_the_manifest():
    forms = forms_for({"manifest": YAML_POD})
    assert forms.is_valid()
    forms.add_input_errors(WhatIfInputError({"pod.spec.containers[0].name": ["missing"]}))
    assert forms.pod.errors["manifest"] == ["spec.containers[0].name: missing"]
