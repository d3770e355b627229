"""The pod-set fingerprint an NRT publishes as `nodeTopologyPodsFingerprint` (pure).

The node agent (NFD topology-updater or resource-topology-exporter) fingerprints the pods
it saw when it wrote the NodeResourceTopology; scheduler-plugins fingerprints the pods its
informer puts on the node and trusts the NRT only when the two agree. Recomputing it here
tells whether a mirrored NRT describes the pods we mirrored with it.

Upstream, read for this module (our own code, not a port of theirs):

- github.com/k8stopologyawareschedwg/podfingerprint `podfingerprint.go` at
  929f98bef311b9dd64a1765b45196cfedbdf7209 (v0.2.2 + 2 commits; the same algorithm at
  415b265512a5). Its later commit 4740dd93937a moved from OneOfOne/xxhash to
  cespare/xxhash/v2 and added golden files `testdata/compat-*.{txt,sign}` so that the
  output stays the same; NFD v0.20 pins podfingerprint v0.3.0.
- The algorithm, version `v001`:
  1. a pod's hash is XXH64(name, seed=XXH64(namespace, seed=0)) over the UTF-8 bytes;
  2. the pod hashes are sorted as unsigned 64-bit integers (so order does not matter,
     but a pod added twice counts twice: nothing is deduplicated);
  3. each is written as 8 little-endian bytes into one XXH64 stream with seed 0;
  4. the digest is rendered big-endian as 16 lowercase hex digits;
  5. the fingerprint is "pfp0" + "v001" + those digits (24 characters).

Which pods are fingerprinted is the publisher's choice, declared in the NRT attribute
`nodeTopologyPodsFingerprintMethod`:

- NFD topology-updater (`pkg/resourcemonitor/podresourcesscanner.go` at 76e6cc8cc0d5)
  fingerprints every pod of the kubelet podresources List answer, publishes no method
  attribute, and publishes no fingerprint at all when that answer is empty.
- resource-topology-exporter (`pkg/resourcemonitor/resourcemonitor.go` at ef567ef3f9fb)
  publishes the method; for `with-exclusive-resources` it keeps the pods that
  `pkg/podres/filter/numalocality/numalocality.go` `Verify` allows: `exporter_counts_pod`.
- scheduler-plugins (`pkg/noderesourcetopology/cache/store.go`, `overreserve.go` and
  `resourcerequests/exclusive.go` at 903da7df82cb) checks it and, for that method, keeps
  the pods whose spec requests an exclusive resource: `scheduler_counts_pod`.

The two rules read different data (assigned resources versus requests), so they can
disagree on a pod; upstream accepts that. Upstream also declares `exclude-terminal`
(415b265512a5), which neither consumer above reads, so it is not modelled here.
"""

from __future__ import annotations

import struct
from collections.abc import Iterable, Mapping, Set
from dataclasses import dataclass
from enum import StrEnum

import xxhash

from scheduler_api.engine import ContainerSpec, QoSClass

PREFIX = "pfp0"
VERSION = "v001"
ATTRIBUTE = "nodeTopologyPodsFingerprint"
ATTRIBUTE_METHOD = "nodeTopologyPodsFingerprintMethod"
ANNOTATION = "topology.node.k8s.io/fingerprint"  # the legacy place, before NRT attributes

_DIGEST_DIGITS = 16
_HEX_DIGITS = frozenset("0123456789abcdef")
_MINIMUM_LENGTH = 16  # upstream Check: prefix + version + at least 8 characters of sum


class FingerprintMethod(StrEnum):
    """Which pods the publisher fingerprinted (the method attribute's values)."""

    ALL = "all"
    WITH_EXCLUSIVE_RESOURCES = "with-exclusive-resources"


METHOD_ALL = FingerprintMethod.ALL
METHOD_WITH_EXCLUSIVE_RESOURCES = FingerprintMethod.WITH_EXCLUSIVE_RESOURCES


@dataclass(frozen=True)
class PodIdentity:
    """A pod as the fingerprint sees it: v001 knows nothing but namespace and name, so a
    pod deleted and recreated under the same name keeps its fingerprint (upstream README,
    "pod aliasing issue")."""

    namespace: str
    name: str


# --- computing ----------------------------------------------------------------------------


def pod_hash(pod: PodIdentity) -> int:
    """The pod's 64-bit hash: its name hashed with its namespace's hash as the seed.

    Upstream seeds rather than hashing namespace+name so that it sorts integers, not
    strings; the result is part of the format, so we do the same."""
    seed = xxhash.xxh64_intdigest(pod.namespace.encode())
    return xxhash.xxh64_intdigest(pod.name.encode(), seed=seed)


def fingerprint(pods: Iterable[PodIdentity]) -> str:
    """The fingerprint of `pods`, byte for byte as the node agent publishes it.

    O(n log n) for the sort. Duplicates are kept, as upstream keeps them."""
    stream = xxhash.xxh64()
    for value in sorted(pod_hash(pod) for pod in pods):
        stream.update(struct.pack("<Q", value))
    return PREFIX + VERSION + stream.hexdigest()


# --- reading ------------------------------------------------------------------------------


class FingerprintError(ValueError):
    """A published fingerprint we cannot compare with ours."""


class MalformedFingerprint(FingerprintError):
    """Not a pod fingerprint at all (upstream ErrMalformed)."""


class IncompatibleVersion(FingerprintError):
    """A well-formed fingerprint of a version this module does not compute
    (upstream ErrIncompatibleVersion): comparing it would always say "stale"."""


@dataclass(frozen=True)
class ParsedFingerprint:
    version: str
    digest: str


def parse_fingerprint(text: str) -> ParsedFingerprint:
    """Split a published fingerprint, refusing what we could not recompute.

    The checks run in upstream Check's order: length, prefix, version. For v001 we also
    require the 16 lowercase hex digits Sign always writes; upstream would instead report
    such a string as a mismatch, which says the same thing (the NRT cannot be trusted)."""
    if len(text) < _MINIMUM_LENGTH or not text.startswith(PREFIX):
        raise MalformedFingerprint(f"not a pod fingerprint: {text!r}")
    version = text[len(PREFIX) : len(PREFIX) + len(VERSION)]
    if version != VERSION:
        raise IncompatibleVersion(
            f"pod fingerprint version {version!r} is not supported (only {VERSION!r}): {text!r}"
        )
    digest = text[len(PREFIX) + len(VERSION) :]
    if len(digest) != _DIGEST_DIGITS or not set(digest) <= _HEX_DIGITS:
        raise MalformedFingerprint(
            f"a {VERSION} fingerprint needs 16 lowercase hex digits: {text!r}"
        )
    return ParsedFingerprint(version, digest)


def is_fingerprint(text: str) -> bool:
    """Whether `text` is a fingerprint this module can compare with its own."""
    try:
        parse_fingerprint(text)
    except FingerprintError:
        return False
    return True


def fingerprint_matches(published: str, pods: Iterable[PodIdentity]) -> bool:
    """Whether `published` is the fingerprint of `pods` (upstream Check without its error
    text). Raises FingerprintError when `published` cannot be compared at all."""
    parse_fingerprint(published)
    return fingerprint(pods) == published


def method_from_attribute(value: str | None) -> FingerprintMethod:
    """The method scheduler-plugins' autodetect resync assumes from the method attribute.

    Only the exact value `with-exclusive-resources` narrows the pod set; an absent,
    unknown or differently spelled value means all pods (store.go
    podFingerprintForNodeTopology)."""
    if value == FingerprintMethod.WITH_EXCLUSIVE_RESOURCES:
        return FingerprintMethod.WITH_EXCLUSIVE_RESOURCES
    return FingerprintMethod.ALL


# --- with-exclusive-resources: the publisher's rule ----------------------------------------


@dataclass(frozen=True)
class AssignedDevice:
    """One device entry of a podresources container: its ids and its NUMA nodes."""

    device_ids: tuple[str, ...]
    numa_nodes: tuple[int, ...] = ()


@dataclass(frozen=True)
class AssignedResources:
    """One container of the kubelet podresources List answer, as the exporter reads it.

    `memory_numa_nodes` holds, per memory block, the NUMA ids of its topology (empty when
    the block has no topology)."""

    cpu_ids: tuple[int, ...] = ()
    memory_numa_nodes: tuple[tuple[int, ...], ...] = ()
    devices: tuple[AssignedDevice, ...] = ()


def exporter_counts_pod(containers: Iterable[AssignedResources]) -> bool:
    """Whether resource-topology-exporter fingerprints this pod under
    `with-exclusive-resources` (numalocality.Verify).

    A pod counts when one container has any cpu_ids (the kubelet lists the CPUs of
    exclusively pinned containers), a memory block bound to a NUMA node, or a device with
    ids bound to a NUMA node. QoS is not looked at: the kubelet's answer already says it."""
    return any(_container_is_numa_bound(container) for container in containers)


def _container_is_numa_bound(container: AssignedResources) -> bool:
    if container.cpu_ids:
        return True
    if any(_names_a_numa_node(nodes) for nodes in container.memory_numa_nodes):
        return True
    return any(d.device_ids and _names_a_numa_node(d.numa_nodes) for d in container.devices)


def _names_a_numa_node(numa_nodes: Iterable[int]) -> bool:
    """numalocality.IsPresent: no nodes, or only -1, means "no locality"."""
    return any(node >= 0 for node in numa_nodes)


# --- with-exclusive-resources: the checker's rule -----------------------------------------


def scheduler_counts_pod(
    qos: QoSClass,
    containers: Iterable[ContainerSpec],
    init_containers: Iterable[ContainerSpec],
    nrt_resources: Set[str],
) -> bool:
    """Whether scheduler-plugins counts this pod when it checks a `with-exclusive-resources`
    fingerprint (resourcerequests.AreExclusiveForPod, used by categorizePod).

    Only the steady state counts: app containers and sidecar init containers (restart
    policy Always); other init containers have finished by then. `nrt_resources` is every
    resource name in the node's NRT zones (ResourceNamesFromNRT). Requests are in the
    engine's base units, cpu in millicores."""
    sidecars = [c for c in init_containers if c.restart_policy == "Always"]
    steady = [*sidecars, *containers]
    return any(container_requests_exclusive(qos, c.requests, nrt_resources) for c in steady)


def container_requests_exclusive(
    qos: QoSClass, requests: Mapping[str, int], nrt_resources: Set[str]
) -> bool:
    """IsExclusiveForContainer: any one request is exclusive."""
    return any(
        request_is_exclusive(qos, name, amount, nrt_resources) for name, amount in requests.items()
    )


def request_is_exclusive(
    qos: QoSClass, resource: str, amount: int, nrt_resources: Set[str]
) -> bool:
    """resourcerequests.IsExclusive for one request (`amount` in base units, cpu in
    millicores).

    A device or extended resource is exclusive when the NRT publishes it (the NRT is the
    only word on which ones are topology-bound), whatever the amount and the QoS. Native
    resources are exclusive only in Guaranteed pods: whole CPUs, or any memory or
    hugepages."""
    if not _is_native(resource):
        return resource in nrt_resources
    if qos is not QoSClass.GUARANTEED:
        return False
    if resource == "cpu":
        return amount > 0 and amount % 1000 == 0
    if resource == "memory" or resource.startswith("hugepages-"):
        return amount > 0
    return False


def _is_native(resource: str) -> bool:
    """k8s v1helper.IsNativeResource: unprefixed, or in the kubernetes.io domain."""
    return "/" not in resource or "kubernetes.io/" in resource
