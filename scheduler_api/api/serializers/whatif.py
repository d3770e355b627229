"""What-if: the question (a Pod manifest or the compact form) and the engine's answer."""

from __future__ import annotations

from typing import Any

from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from scheduler_api.api.field_validation import KnownFieldsMixin
from scheduler_api.api.serializers.common import string_map_field
from scheduler_api.engine import CPUBindPolicy, CPUExclusivePolicy, CraneCPUPolicy
from scheduler_api.engine import KoordQoSClass as KoordQoS
from scheduler_api.services.whatif import COMPARE_ALL
from topology.parsers.errors import FieldError
from topology.parsers.quantity import parse_quantity
from topology.services.whatif.service import (
    MAX_REPLICAS,
    SCHEDULER_NAME_PATTERN,
    SCHEDULERS,
    SCORING_STRATEGIES,
)

COMPACT_FIELDS = (
    "containers",
    "init_containers",
    "name",
    "namespace",
    "labels",
    "annotations",
    "priority",
    "crane_cpu_policy",
    "crane_topology_awareness",
    "koordinator_qos_class",
    "koordinator_cpu_bind_policy",
    "koordinator_cpu_bind_required",
    "koordinator_cpu_exclusive_policy",
)


class QuantityField(serializers.CharField):
    """A Kubernetes quantity ("500m", "4", "8Gi"); a JSON number is taken as written."""

    def to_internal_value(self, data: Any) -> str:
        if isinstance(data, int | float) and not isinstance(data, bool):
            data = str(data)
        value = super().to_internal_value(data)
        try:
            parse_quantity(value)
        except FieldError as exc:
            raise serializers.ValidationError(str(exc)) from None
        return value


def _quantities(help_text: str) -> serializers.DictField:
    return serializers.DictField(child=QuantityField(), required=False, help_text=help_text)


class CompactContainerSerializer(serializers.Serializer):
    name = serializers.CharField(max_length=63)
    requests = _quantities('resource → quantity, e.g. {"cpu": "4", "memory": "8Gi"}')
    limits = _quantities("resource → quantity; a missing request defaults to its limit")
    restart_policy = serializers.ChoiceField(
        ["Always"], required=False, help_text='init containers only: "Always" makes a sidecar'
    )


def _choices(values: Any, help_text: str) -> serializers.ChoiceField:
    return serializers.ChoiceField([v for v in values if v], required=False, help_text=help_text)


@extend_schema_field({"type": "object", "nullable": True, "additionalProperties": True})
class ManifestField(serializers.JSONField):
    """A Pod manifest: a JSON object; null is taken as not given (the compact form then)."""


class WhatIfRequestSerializer(KnownFieldsMixin, serializers.Serializer):
    """Either `pod` (a whole Pod manifest) or the compact form, plus the run's options."""

    pod = ManifestField(
        required=False,
        allow_null=True,
        help_text="a Kubernetes Pod manifest (v1 Pod); null: not given. Pod-level "
        "resources (spec.resources: cpu, memory, hugepages-<size>) are read as each "
        "scheduler reads them (see judged_by.pod_level_resources)",
    )
    containers = CompactContainerSerializer(many=True, required=False, allow_empty=False)
    init_containers = CompactContainerSerializer(many=True, required=False)
    name = serializers.CharField(required=False, max_length=253)
    namespace = serializers.CharField(required=False, max_length=253)
    labels = string_map_field(required=False)
    annotations = string_map_field(required=False)
    priority = serializers.IntegerField(required=False, allow_null=True)
    crane_cpu_policy = _choices(CraneCPUPolicy, "annotation topology.crane.io/cpu-policy")
    crane_topology_awareness = serializers.BooleanField(
        required=False, allow_null=True, help_text="annotation topology.crane.io/topology-awareness"
    )
    koordinator_qos_class = _choices(KoordQoS, "label koordinator.sh/qosClass")
    koordinator_cpu_bind_policy = _choices(
        CPUBindPolicy, "scheduling.koordinator.sh/resource-spec CPU bind policy"
    )
    koordinator_cpu_bind_required = serializers.BooleanField(
        default=False, help_text="true: requiredCPUBindPolicy (hard); false: preferred (soft)"
    )
    koordinator_cpu_exclusive_policy = _choices(
        CPUExclusivePolicy, "resource-spec preferredCPUExclusivePolicy"
    )
    replicas = serializers.IntegerField(
        min_value=0,
        max_value=MAX_REPLICAS,
        default=1,
        help_text="place this many copies one after another (0: verdicts only); "
        "above the synchronous limit the question runs in the background (202)",
    )
    scheduler_name = serializers.RegexField(
        SCHEDULER_NAME_PATTERN,
        max_length=253,
        required=False,
        allow_blank=True,
        help_text="the pod's spec.schedulerName (overrides the manifest's): it picks the "
        "cluster's scheduler profile, which decides the system and its plugin arguments; "
        "default `default-scheduler`",
    )
    scheduler = serializers.ChoiceField(
        [*SCHEDULERS, COMPARE_ALL],
        default="auto",
        help_text="`auto`: the profile `scheduler_name` picks, else the system whose labels "
        "or annotations the pod carries, else each node's own system with each system's "
        "nodes ranked apart; a system name overrides the profile's system; `default` is "
        f"kube-scheduler without a topology plugin; `{COMPARE_ALL}`: compare every scheduler "
        "side by side (runs in the background, 202)",
    )
    scoring = serializers.ChoiceField(
        SCORING_STRATEGIES, required=False, allow_null=True, help_text="default LeastAllocated"
    )
    weights = serializers.DictField(
        child=serializers.IntegerField(min_value=1),
        required=False,
        allow_null=True,
        help_text="resource → scoring weight",
    )
    capacity = serializers.BooleanField(
        default=True,
        help_text="false: skip counting how many more copies each node could take (the "
        "answer's `capacity` is then null); on large clusters, for pods that bind cpus, "
        "that count is most of a what-if's time",
    )
    use_draft_policies = serializers.BooleanField(
        default=False,
        help_text="judge the nodes as if their saved desired node policies were applied "
        "(labels and the node.koordinator.sh/reservation annotation)",
    )
    track = serializers.BooleanField(
        default=False,
        help_text="remember this prediction and follow it up: when pods of the manifest's "
        "controller owner (else its name, else its generateName) land within the window, "
        "record where and whether the prediction held (GET clusters/{cluster}/predictions; "
        "the answer's `tracked` names the prediction)",
    )

    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        if attrs.get("pod", ...) is None:
            del attrs["pod"]
        compact = [f for f in COMPACT_FIELDS if f in self.initial_data]
        if "pod" in attrs and compact:
            raise serializers.ValidationError(
                {f: ["Give either `pod` or the compact form, not both."] for f in compact}
            )
        if "pod" not in attrs and "containers" not in attrs:
            raise serializers.ValidationError(
                {"pod": ["Give a Pod manifest in `pod`, or `containers` (the compact form)."]}
            )
        if "pod" in attrs and not isinstance(attrs["pod"], dict):
            raise serializers.ValidationError({"pod": ["Expected a Pod manifest (an object)."]})
        return attrs


class AdmissionSerializer(serializers.Serializer):
    admitted = serializers.BooleanField(help_text="false: the kubelet rejects the bound pod")
    reason = serializers.CharField(help_text="why, or why it was not checked")
    checked = serializers.BooleanField(
        help_text="false: Topolens cannot reproduce this node's kubelet (no CPU layout "
        "published, or a node agent pins the CPUs); `admitted` is then assumed"
    )
    memory_numa_zones = serializers.ListField(
        child=serializers.IntegerField(),
        allow_null=True,
        help_text="NUMA zone ids the Static Memory Manager would take the pod's memory and "
        "hugepages from; null: it did not run (not Guaranteed, or the node does not run "
        "or publish it)",
    )


class NodeVerdictSerializer(serializers.Serializer):
    node = serializers.CharField()
    system = serializers.CharField(help_text="the scheduler that judged this node")
    fits = serializers.BooleanField(
        help_text="the scheduler would bind the pod here and the kubelet would admit it"
    )
    score = serializers.IntegerField(
        allow_null=True,
        help_text="the scheduler's raw node score, 0-100; comparable only within one system",
    )
    rules = serializers.CharField(
        help_text="the id, in the answer's `rules`, of the rules that judged this node",
    )
    scheduler_fits = serializers.BooleanField(help_text="the scheduler would bind the pod here")
    admission = AdmissionSerializer(
        allow_null=True, help_text="the kubelet's verdict once bound; null: not bound"
    )
    reasons = serializers.ListField(child=serializers.CharField(), help_text="why (not)")
    numa_zones = serializers.ListField(
        child=serializers.IntegerField(), help_text="NUMA zone ids the pod's resources come from"
    )
    cpuset = serializers.ListField(
        child=serializers.IntegerField(),
        allow_null=True,
        help_text="logical CPU ids the pod would hold exclusively (the scheduler's, or what "
        "the kubelet's static CPU manager would pin); null: none bound, or not worked out",
    )
    annotations = string_map_field(help_text="what the scheduler would write on the pod")
    notes = serializers.ListField(child=serializers.CharField())


class PlacementSerializer(serializers.Serializer):
    replica = serializers.IntegerField()
    node = serializers.CharField(allow_null=True, help_text="null: no node could take it")
    numa_zones = serializers.ListField(child=serializers.IntegerField())
    cpuset = serializers.ListField(
        child=serializers.IntegerField(), allow_null=True, help_text="logical CPU ids"
    )
    system = serializers.CharField(allow_null=True, help_text="the system whose node it went to")


class CapacitySerializer(serializers.Serializer):
    total = serializers.IntegerField(
        help_text="how many more copies fit, each node filled alone (pods); nodes whose "
        "kubelet would reject the pod count none"
    )
    per_node = serializers.DictField(child=serializers.IntegerField())
    per_system = serializers.DictField(
        child=serializers.IntegerField(), help_text="`total` by the system judging each node"
    )


class JudgedBySerializer(serializers.Serializer):
    system = serializers.CharField(
        help_text="the system judging the pod; `auto`: no profile or mark says, so each node "
        "is judged by its own system and each system's nodes are ranked apart"
    )
    scheduler_name = serializers.CharField(help_text="the pod's schedulerName")
    profile = serializers.CharField(allow_null=True, help_text="the scheduler profile applied")
    profile_source = serializers.CharField(allow_null=True, help_text="where it was read")
    how = serializers.CharField(help_text="why this system judges the pod, in a sentence")
    arguments = serializers.DictField(
        child=serializers.DictField(),
        help_text="per system, the plugin arguments in force, as upstream spells them",
    )
    not_judged = serializers.ListField(
        child=serializers.CharField(),
        help_text="the pod's fields that keep it off nodes and that Topolens does not judge "
        "yet (spec.nodeSelector, spec.affinity, spec.tolerations, "
        "spec.topologySpreadConstraints, spec.resourceClaims): a node counted as fitting "
        "may be one of those excludes",
    )
    pod_level_resources = serializers.ListField(
        child=serializers.CharField(),
        required=False,
        help_text="when the pod sets pod-level resources (spec.resources), one sentence per "
        "system judging: whether its scheduler reads them as the pod's requests "
        "(NodeResourcesFit, its NUMA plugin) or sums the containers, and the Kubernetes "
        "it is built on; empty otherwise",
    )


class GroupSerializer(serializers.Serializer):
    system = serializers.CharField()
    fits = serializers.IntegerField(help_text="nodes where the pod fits (both stages)")
    rejected_by_kubelet = serializers.IntegerField(
        help_text="nodes the scheduler would bind it to but whose kubelet would reject it"
    )
    best = serializers.CharField(allow_null=True, help_text="this system's best node")
    placements = PlacementSerializer(many=True, help_text="the replicas among its nodes")


class TrackedSerializer(serializers.Serializer):
    id = serializers.IntegerField(help_text="GET clusters/{cluster}/predictions/{id}")
    matched_by = serializers.CharField(
        help_text="what a landed pod is recognised by: Kind/name of the controller owner, "
        "the pod name, or generateName followed by *"
    )
    expires_at = serializers.DateTimeField(help_text="when it stops waiting for pods")


class WhatIfResultSerializer(serializers.Serializer):
    """The offline `manage.py whatif` JSON. A pod that fits nowhere is an answer, not an error."""

    scheduler = serializers.CharField(help_text="the system that judged (see `judged_by`)")
    judged_by = JudgedBySerializer()
    scoring = serializers.CharField(help_text="scheduler-plugins' scoring strategy in force")
    data_age_seconds = serializers.FloatField(
        allow_null=True, help_text="seconds since the mirror was known equal to the cluster"
    )
    groups = GroupSerializer(many=True, help_text="per system, ranked apart")
    nodes = NodeVerdictSerializer(
        many=True, help_text="every node, grouped by system, best first within each"
    )
    rules = serializers.DictField(
        child=serializers.ListField(child=serializers.CharField()),
        help_text="the rules that judged the nodes, by the id each node names: one line per "
        "rule (the scheduler plugin's node policy and, behind schedulers that pick no CPUs, "
        "the kubelet's CPU, Topology and Memory Manager policies and options), each with "
        "where it was read or what was assumed",
    )
    placements = PlacementSerializer(
        many=True, help_text="where each replica goes; empty under `auto` (see `groups`)"
    )
    capacity = CapacitySerializer(
        allow_null=True, help_text="null: not counted (the question asked `capacity: false`)"
    )
    tracked = TrackedSerializer(
        required=False, help_text="only when asked with `track: true`: the stored prediction"
    )
