"""One pod's diagnosis for a page or the API: the stored one while it is current, else
made now for that pod alone (a refresh may still be queued after the last write)."""

from __future__ import annotations

from typing import Any

from django.utils import timezone

from topology.models import Cluster, PodDiagnosis
from topology.services.diagnosis.mirror import pod_facts_from_mirror
from topology.services.diagnosis.pods import diagnose_pod


class NoSuchPod(LookupError):
    pass


class NothingToDiagnose(LookupError):
    """The pod is neither Pending nor rejected by the kubelet."""


def pod_diagnosis(cluster: Cluster, namespace: str, name: str) -> dict[str, Any]:
    current = Cluster.objects.get(pk=cluster.pk)
    version = current.mirror_version
    stored = PodDiagnosis.objects.filter(cluster=cluster, namespace=namespace, name=name).first()
    if stored is not None and current.diagnosed_version == version:
        return stored.as_json(current)  # the last refresh was made from this mirror
    facts = pod_facts_from_mirror(cluster, namespace, name)
    if facts is None:
        raise NoSuchPod(f"no pod {namespace}/{name} in {cluster.name}")
    pod = facts.pods[0]
    if not (pod.pending or pod.rejected):
        where = f"on node {pod.node_name}" if pod.node_name else "not bound"
        raise NothingToDiagnose(
            f"pod {namespace}/{name} is {pod.phase} {where}: only Pending pods and pods the "
            "kubelet rejected are diagnosed"
        )
    body = diagnose_pod(facts, pod)
    return {**body, "computed_at": timezone.now().isoformat(), "mirror_version": version}
