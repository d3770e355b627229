"""One what-if question, validated once where it enters (API, dashboard, CLI, write-back).

A `WhatIfQuestion` holds the Pod manifest as given, the engine's `PodSpec` parsed from it,
and the run's options. `WhatIfQuestion.from_inputs` is the one place they are checked:
every field at fault is reported together in a `WhatIfInputError`, and no question
exists that has not passed. What runs it is `topology.services.whatif.service`.
"""

from __future__ import annotations

import copy
import dataclasses
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from scheduler_api.engine import (
    DEFAULT_SCHEDULER_NAME,
    PodSpec,
    Scheduler,
    ScoringStrategy,
)
from topology.adapters import pod_spec_of
from topology.parsers import ObjectParseError
from topology.parsers.names import DNS_SUBDOMAIN
from topology.parsers.nesting import NulCharacter, TooDeep, check_nesting
from topology.parsers.pod import parse_pod

COMPARE_ALL = "all"  # every scheduler side by side, on one snapshot

SCHEDULERS = tuple(s.value for s in Scheduler)
SCORING_STRATEGIES = tuple(s.value for s in ScoringStrategy)
MAX_REPLICAS = 10_000
DEFAULT_POD_NAME = "whatif-pod"
SCHEDULER_NAME_PATTERN = DNS_SUBDOMAIN  # a schedulerName is an object name


class WhatIfInputError(ValueError):
    """A what-if request that cannot be run; `field_errors` says what to fix where."""

    def __init__(self, field_errors: Mapping[str, list[str]]) -> None:
        self.field_errors = {k: list(v) for k, v in field_errors.items()}
        summary = "; ".join(f"{k}: {' '.join(v)}" for k, v in self.field_errors.items())
        super().__init__(summary)


# What a pod may carry that keeps it off nodes and that the engine does not judge (yet):
# an answer names those the pod has, so that "fits" is not read as the whole story.
UNJUDGED_FIELDS = (
    "nodeSelector",
    "affinity",
    "tolerations",
    "topologySpreadConstraints",
    "resourceClaims",
)


# DRA (resource.k8s.io): the mirror shows ResourceSlices and ResourceClaims on the node
# page, but the engine judges neither; a pod with claims is told so, with the nodes whose
# devices were left out.
DRA_CLAIMS_NOT_JUDGED = "DRA resource claims are not judged yet"
MAX_NAMED_DRA_NODES = 5


def unjudged_constraints(manifest: Any, dra_nodes: Sequence[str] = ()) -> list[str]:
    """The fields of `UNJUDGED_FIELDS` the pod sets, as `spec.<field>`; for
    spec.resourceClaims, why: DRA claims are not judged, and the DRA devices of
    `dra_nodes` (the nodes ResourceSlices publish devices on) were not considered."""
    spec = manifest.get("spec") if isinstance(manifest, dict) else None
    if not isinstance(spec, dict):
        return []
    fields = [f"spec.{name}" for name in UNJUDGED_FIELDS if spec.get(name)]
    return [dra_statement(dra_nodes) if f == "spec.resourceClaims" else f for f in fields]


def has_resource_claims(manifest: Any) -> bool:
    spec = manifest.get("spec") if isinstance(manifest, dict) else None
    return isinstance(spec, dict) and bool(spec.get("resourceClaims"))


def dra_statement(dra_nodes: Sequence[str]) -> str:
    """ "spec.resourceClaims (DRA resource claims are not judged yet; the DRA devices of
    gpu-1, gpu-2 were not considered)"."""
    if not dra_nodes:
        return f"spec.resourceClaims ({DRA_CLAIMS_NOT_JUDGED})"
    named = ", ".join(dra_nodes[:MAX_NAMED_DRA_NODES])
    more = len(dra_nodes) - MAX_NAMED_DRA_NODES
    nodes = f"{named} and {more} more" if more > 0 else named
    return (
        f"spec.resourceClaims ({DRA_CLAIMS_NOT_JUDGED}; the DRA devices ResourceSlices "
        f"publish on {nodes} were not considered)"
    )


# A what-if pod's size, bounded so that no question can grow an answer or a cache without
# end (a pod naming 50,000 extended resources made a 106 MB answer). Real pods use a few.
MAX_CONTAINERS = 64
MAX_RESOURCES = 64


def _check_size(manifest: dict[str, Any]) -> None:
    """WhatIfInputError when the pod has too many containers or resources in a map."""
    spec = manifest.get("spec")
    if not isinstance(spec, dict):
        return
    errors: dict[str, list[str]] = {}
    names: set[object] = set()
    lists = [(key, spec.get(key)) for key in ("containers", "initContainers")]
    counted = [(key, items) for key, items in lists if isinstance(items, list)]
    if sum(len(items) for _, items in counted) > MAX_CONTAINERS:
        errors["pod.spec.containers"] = [f"at most {MAX_CONTAINERS} containers in all"]
    pod_level = spec.get("resources")
    for kind in ("requests", "limits"):
        amounts = pod_level.get(kind) if isinstance(pod_level, dict) else None
        if isinstance(amounts, dict) and len(amounts) > MAX_RESOURCES:
            errors[f"pod.spec.resources.{kind}"] = [f"at most {MAX_RESOURCES} resources"]
    for key, items in counted:
        for index, container in enumerate(items[:MAX_CONTAINERS]):
            resources = container.get("resources") if isinstance(container, dict) else None
            for kind in ("requests", "limits"):
                amounts = resources.get(kind) if isinstance(resources, dict) else None
                if isinstance(amounts, dict) and len(amounts) > MAX_RESOURCES:
                    path = f"pod.spec.{key}.{index}.resources.{kind}"
                    errors[path] = [f"at most {MAX_RESOURCES} resources"]
                elif isinstance(amounts, dict):
                    names.update(amounts)
    if len(names) > MAX_RESOURCES and not errors:
        # each node's verdict may name every resource it is short of: bound them in all
        errors["pod.spec.containers"] = [
            f"at most {MAX_RESOURCES} different resources in all containers ({len(names)})"
        ]
    if errors:
        raise WhatIfInputError(errors)


def pod_from_manifest(manifest: Any) -> PodSpec:
    """A Pod manifest (dict) as the engine's PodSpec; spec.nodeName is ignored."""
    if not isinstance(manifest, dict):
        raise WhatIfInputError({"pod": ["expected a Pod manifest (a JSON/YAML object)"]})
    if manifest.get("kind", "Pod") != "Pod":
        raise WhatIfInputError({"pod": [f"expected kind Pod, got {manifest.get('kind')!r}"]})
    try:
        check_nesting(manifest, refuse_nul=True)
    except (TooDeep, NulCharacter) as error:
        raise WhatIfInputError({"pod": [str(error)]}) from None
    _check_size(manifest)
    obj = copy.deepcopy(manifest)
    obj.setdefault("apiVersion", "v1")
    obj["kind"] = "Pod"
    metadata = obj.setdefault("metadata", {})
    if isinstance(metadata, dict):
        metadata.setdefault("name", DEFAULT_POD_NAME)
        metadata.setdefault("namespace", "default")
    if isinstance(obj.get("spec"), dict):
        obj["spec"].pop("nodeName", None)
    try:
        record = parse_pod(obj)
    except ObjectParseError as error:
        raise WhatIfInputError({f"pod.{error.field}": [error.message]}) from error
    return pod_spec_of(record, obj)


def pod_scheduler_name(manifest: Any, override: str | None = None) -> str:
    """The schedulerName that picks the pod's profile: `override` (the what-if's own
    `scheduler_name`), else the manifest's spec.schedulerName, else the default."""
    if override:
        return override
    spec = manifest.get("spec") if isinstance(manifest, dict) else None
    name = spec.get("schedulerName") if isinstance(spec, dict) else None
    return name if isinstance(name, str) and name else DEFAULT_SCHEDULER_NAME


def check_options(
    *,
    replicas: Any,
    scheduler: Any,
    scoring: Any,
    weights: Any,
    capacity: Any = True,
    scheduler_name: Any = None,
) -> dict[str, list[str]]:
    """Field errors of the non-pod inputs (empty when they are all fine)."""
    errors: dict[str, list[str]] = {}
    if scheduler_name not in (None, "") and (
        not isinstance(scheduler_name, str) or not SCHEDULER_NAME_PATTERN.fullmatch(scheduler_name)
    ):
        errors["scheduler_name"] = [
            "must be a schedulerName: lower-case letters, digits, '-' and '.', at most 253"
        ]
    if not isinstance(capacity, bool):
        errors["capacity"] = ["must be true or false"]
    if isinstance(replicas, bool) or not isinstance(replicas, int) or not 0 <= replicas:
        errors["replicas"] = ["must be a whole number ≥ 0"]
    elif replicas > MAX_REPLICAS:
        errors["replicas"] = [f"at most {MAX_REPLICAS}"]
    if scheduler not in (*SCHEDULERS, COMPARE_ALL):
        errors["scheduler"] = [f"must be one of {', '.join((*SCHEDULERS, COMPARE_ALL))}"]
    if scoring not in (None, "", *SCORING_STRATEGIES):
        errors["scoring"] = [f"must be one of {', '.join(SCORING_STRATEGIES)}"]
    if weights is not None and (
        not isinstance(weights, Mapping)
        or not all(
            isinstance(k, str) and k and isinstance(v, int) and not isinstance(v, bool) and v >= 1
            for k, v in weights.items()
        )
    ):
        errors["weights"] = ["must map resource names to whole numbers ≥ 1"]
    return errors


def validated_pod(
    pod: Any,
    *,
    replicas: Any,
    scheduler: Any,
    scoring: Any,
    weights: Any,
    capacity: Any = True,
    scheduler_name: Any = None,
) -> PodSpec:
    """The pod as the engine sees it, or WhatIfInputError with every field at fault."""
    errors = check_options(
        replicas=replicas,
        scheduler=scheduler,
        scoring=scoring,
        weights=weights,
        capacity=capacity,
        scheduler_name=scheduler_name,
    )
    spec = None
    try:
        spec = pod_from_manifest(pod)
    except WhatIfInputError as error:
        errors.update(error.field_errors)
    if errors or spec is None:
        raise WhatIfInputError(errors)
    return spec


def parse_weights(text: str) -> dict[str, int]:
    """`cpu=1,memory=2` → {"cpu": 1, "memory": 2}; WhatIfInputError when malformed."""
    weights: dict[str, int] = {}
    for part in filter(None, (p.strip() for p in text.split(","))):
        name, sep, value = part.partition("=")
        if not sep or not name.strip() or not value.strip().isdigit() or int(value) < 1:
            raise WhatIfInputError({"weights": [f"{part!r} is not resource=weight (weight ≥ 1)"]})
        weights[name.strip()] = int(value)
    return weights


@dataclass(frozen=True)
class WhatIfQuestion:
    """A pod and the options of one what-if, checked together (build with `from_inputs`).

    `scheduler` is a system (`SCHEDULERS`) or `COMPARE_ALL`; `scheduler_name` overrides
    the manifest's spec.schedulerName when picking the pod's profile; `capacity=False`
    skips counting how many more copies each node could take; `use_draft_policies`
    judges nodes as if their saved NodePolicies were applied; `from_manifest` says the
    dashboard's pod came from a pasted manifest rather than its container rows."""

    pod: dict[str, Any]  # the Pod manifest as given
    spec: PodSpec = field(compare=False, repr=False)  # the pod as the engine sees it
    replicas: int = 1
    scheduler: str = Scheduler.AUTO.value
    scoring: str | None = None
    weights: dict[str, int] | None = None
    capacity: bool = True
    use_draft_policies: bool = False
    scheduler_name: str | None = None
    from_manifest: bool = False
    # The nodes whose ResourceSlices publish DRA devices, read from the mirror when the
    # pod has resource claims (`with_dra_nodes`): named in the not-judged statement.
    dra_nodes: tuple[str, ...] = field(default=(), compare=False)

    def with_dra_nodes(self, read: Callable[[], Sequence[str]]) -> WhatIfQuestion:
        """This question knowing the cluster's DRA nodes (`read` runs only when the pod
        has resource claims: a pod without any is told nothing of DRA)."""
        if not has_resource_claims(self.pod):
            return self
        return dataclasses.replace(self, dra_nodes=tuple(read()))

    @property
    def not_judged(self) -> list[str]:
        """What the answer says it did not judge (`unjudged_constraints`)."""
        return unjudged_constraints(self.pod, self.dra_nodes)

    @classmethod
    def from_inputs(
        cls,
        pod: Any,
        *,
        replicas: Any = 1,
        scheduler: Any = Scheduler.AUTO.value,
        scoring: Any = None,
        weights: Any = None,
        capacity: Any = True,
        use_draft_policies: bool = False,
        scheduler_name: Any = None,
        from_manifest: bool = False,
    ) -> WhatIfQuestion:
        """The question, or WhatIfInputError naming every field at fault."""
        spec = validated_pod(
            pod,
            replicas=replicas,
            scheduler=scheduler,
            scoring=scoring,
            weights=weights,
            capacity=capacity,
            scheduler_name=scheduler_name,
        )
        return cls(
            pod=pod,
            spec=spec,
            replicas=replicas,
            scheduler=scheduler,
            scoring=scoring or None,
            weights=dict(weights) if weights else None,
            capacity=capacity,
            use_draft_policies=bool(use_draft_policies),
            scheduler_name=scheduler_name or None,
            from_manifest=from_manifest,
        )

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> WhatIfQuestion:
        """A question stored with `as_json` (checked again: it comes from storage)."""
        return cls.from_inputs(**data)

    def as_json(self) -> dict[str, Any]:
        """Everything but the parsed pod (and the DRA nodes, read again from the mirror
        when asked), for a background task to ask again."""
        return {
            f.name: copy.deepcopy(getattr(self, f.name))
            for f in dataclasses.fields(self)
            if f.name not in ("spec", "dra_nodes")
        }

    @property
    def compares_schedulers(self) -> bool:
        return self.scheduler == COMPARE_ALL

    @property
    def pod_scheduler_name(self) -> str:
        """The schedulerName that picks the pod's profile."""
        return pod_scheduler_name(self.pod, self.scheduler_name)

    def under(self, scheduler: str) -> WhatIfQuestion:
        """The same question judged by `scheduler` (one of SCHEDULERS, or COMPARE_ALL),
        not parsed again."""
        if scheduler not in (*SCHEDULERS, COMPARE_ALL):
            raise ValueError(f"{scheduler!r} is not one of {', '.join(SCHEDULERS)} or all")
        return dataclasses.replace(self, scheduler=scheduler)

    def cache_key(self) -> dict[str, Any]:
        """What makes two questions the same for a remembered answer."""
        return {
            "pod": self.pod,
            "replicas": self.replicas,
            "scheduler": self.scheduler,
            "scoring": self.scoring,
            "weights": self.weights,
            "capacity": self.capacity,
            "scheduler_name": self.scheduler_name,
        }
