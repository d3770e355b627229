"""One diagnosis report: the pods' diagnoses and the data-truth findings, as JSON."""

from __future__ import annotations

from typing import Any

from topology.services.diagnosis.facts import ClusterFacts
from topology.services.diagnosis.findings import find_all
from topology.services.diagnosis.pods import diagnose_pods


class UnknownPod(LookupError):
    """`--pod` names a pod that is neither Pending nor rejected, or is not there."""


def diagnosis_report(facts: ClusterFacts, *, only: str | None = None) -> dict[str, Any]:
    """`{"data_age_seconds", "pods", "findings"}` as `manage.py diagnose` prints it.

    `only` ("namespace/name"): that pod's diagnosis, and the findings about its node or
    itself; UnknownPod when it is not a Pending or rejected pod of the facts."""
    pods = diagnose_pods(facts, only=only)
    findings = [f.as_json() for f in find_all(facts)]
    if only is not None:
        if not pods:
            known = any(p.key == only for p in facts.pods)
            state = "neither Pending nor rejected" if known else "not found"
            raise UnknownPod(f"pod {only}: {state}")
        node = pods[0]["node"]
        findings = [f for f in findings if f["object"] == only or (node and f["node"] == node)]
    return {"data_age_seconds": facts.data_age_seconds, "pods": pods, "findings": findings}
