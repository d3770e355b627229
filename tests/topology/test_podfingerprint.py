"""The pod-set fingerprint, against the vectors github.com/k8stopologyawareschedwg/podfingerprint
publishes, and the two `with-exclusive-resources` selection rules (no database)."""

from __future__ import annotations

import random

import pytest

from scheduler_api.engine import ContainerSpec, PodSpec
from topology.domain.podfingerprint import (
    METHOD_ALL,
    METHOD_WITH_EXCLUSIVE_RESOURCES,
    AssignedDevice,
    AssignedResources,
    FingerprintMethod,
    IncompatibleVersion,
    MalformedFingerprint,
    PodIdentity,
    exporter_counts_pod,
    fingerprint,
    fingerprint_matches,
    is_fingerprint,
    method_from_attribute,
    parse_fingerprint,
    scheduler_counts_pod,
)


def pods_from_listing(listing: str) -> list[PodIdentity]:
    """Upstream parsePodsTxt (signature_test.go): the first two fields of each line."""
    lines = [line.split() for line in listing.splitlines() if not line.startswith("#")]
    return [PodIdentity(fields[0], fields[1]) for fields in lines if len(fields) >= 2]


# --- upstream vectors, verbatim ------------------------------------------------------------

# tracing_test.go (TestTraceStatusJSON, TestTraceStatusRepr)
# at 929f98bef311b9dd64a1765b45196cfedbdf7209.
TRACING_PODS = [
    PodIdentity("ns1", "n1"),
    PodIdentity("ns1", "n2"),
    PodIdentity("ns2", "n1"),
    PodIdentity("ns3", "n1"),
    PodIdentity("ns3", "n2"),
]
TRACING_SIGN = "pfp0v001b92008c14168b3a6"

# testdata/compat-tiny-3pods-1ns.{txt,sign} at 7eea983e1e4068a91fa7bf1fa5b45e25aaae9435.
COMPAT_TINY = """\
production                      jaeger-dpgjk      1/1 Running 1 42d
production                      nginx-rt684       1/1 Running 1 42d
production                      envoy-g9m22       1/1 Running 1 42d
"""

# testdata/compat-small-10pods-3ns.txt at 4740dd93937a10431ad70ef60871e76f9e1ee5e6,
# .sign at 7eea983e1e4068a91fa7bf1fa5b45e25aaae9435.
COMPAT_SMALL = """\
analytics                       controller-69dkj  1/1 Running 1 42d
kube-public                     subscriber-tq6v7  1/1 Running 1 42d
kube-public                     transformer-hfbng 1/1 Running 1 42d
kube-public                     validator-c6pn5   1/1 Running 1 42d
kube-system                     proxy-wszrd       1/1 Running 1 42d
middleware                      processor-jkrl4   1/1 Running 1 42d
network                         gateway-vsll5     1/1 Running 1 42d
network                         importer-kzdfr    1/1 Running 1 42d
network                         importer-q5vt9    1/1 Running 1 42d
staging                         prometheus-bwgbn  1/1 Running 1 42d
"""

# testdata/compat-medium-20pods-1ns.{txt,sign} at 7eea983e1e4068a91fa7bf1fa5b45e25aaae9435.
COMPAT_MEDIUM_20 = """\
development                     importer-kxqpk    1/1 Running 1 42d
development                     processor-424xv   1/1 Running 1 42d
development                     transformer-84vpn 1/1 Running 1 42d
development                     jaeger-6g6n9      1/1 Running 1 42d
development                     publisher-cq98w   1/1 Running 1 42d
development                     subscriber-24lpk  1/1 Running 1 42d
development                     collector-zvl28   1/1 Running 1 42d
development                     watcher-bj7b6     1/1 Running 1 42d
development                     transformer-mk7qw 1/1 Running 1 42d
development                     mongodb-b5pxs     1/1 Running 1 42d
development                     watcher-4qzlg     1/1 Running 1 42d
development                     publisher-ftpnk   1/1 Running 1 42d
development                     fluentd-fs9j8     1/1 Running 1 42d
development                     jaeger-flvh4      1/1 Running 1 42d
development                     manager-l6n55     1/1 Running 1 42d
development                     grafana-q7sdf     1/1 Running 1 42d
development                     prometheus-qds9v  1/1 Running 1 42d
development                     collector-b7fx4   1/1 Running 1 42d
development                     consumer-l94c8    1/1 Running 1 42d
development                     redis-k7rmn       1/1 Running 1 42d
"""

# testdata/compat-medium-50pods-5ns.txt at 4740dd93937a10431ad70ef60871e76f9e1ee5e6,
# .sign at 7eea983e1e4068a91fa7bf1fa5b45e25aaae9435.
COMPAT_MEDIUM_50 = """\
analytics                       collector-p7w79     1/1 Running 1 42d
analytics                       jaeger-t8qlh        1/1 Running 1 42d
analytics                       prometheus-9cvdm    1/1 Running 1 42d
backend                         collector-456vn     1/1 Running 1 42d
backend                         controller-clp8s    1/1 Running 1 42d
cert-manager                    nginx-x8mjt         1/1 Running 1 42d
default                         mongodb-hblqb       1/1 Running 1 42d
default                         mongodb-tgtb7       1/1 Running 1 42d
development                     proxy-vs6pj         1/1 Running 1 42d
frontend                        nginx-f4576         1/1 Running 1 42d
ingress                         jaeger-2q77t        1/1 Running 1 42d
ingress                         publisher-h2p5j     1/1 Running 1 42d
ingress                         worker-lxljm        1/1 Running 1 42d
kube-public                     validator-4gdnh     1/1 Running 1 42d
kube-system                     exporter-b8stn      1/1 Running 1 42d
kube-system                     gateway-rcw47       1/1 Running 1 42d
kube-system                     manager-klcz6       1/1 Running 1 42d
kube-system                     publisher-5n8vp     1/1 Running 1 42d
kube-system                     scheduler-4s497     1/1 Running 1 42d
kube-system                     watcher-b6f86       1/1 Running 1 42d
kube-system                     watcher-bswf9       1/1 Running 1 42d
messaging                       aggregator-lt55t    1/1 Running 1 42d
messaging                       controller-9s6l4    1/1 Running 1 42d
messaging                       controller-csd9s    1/1 Running 1 42d
messaging                       exporter-mhbzn      1/1 Running 1 42d
messaging                       server-vn7lq        1/1 Running 1 42d
middleware                      dispatcher-zrqcs    1/1 Running 1 42d
monitoring                      aggregator-x2png    1/1 Running 1 42d
monitoring                      gateway-drb5g       1/1 Running 1 42d
monitoring                      manager-dp7vt       1/1 Running 1 42d
monitoring                      manager-t5m4x       1/1 Running 1 42d
monitoring                      mongodb-8xsm6       1/1 Running 1 42d
network                         collector-4z6g2     1/1 Running 1 42d
network                         consumer-w6gqq      1/1 Running 1 42d
network                         mongodb-25bkw       1/1 Running 1 42d
production                      publisher-8jf5q     1/1 Running 1 42d
production                      watcher-zmrxt       1/1 Running 1 42d
security                        postgres-tf9z4      1/1 Running 1 42d
security                        publisher-9b864     1/1 Running 1 42d
security                        watcher-25vpc       1/1 Running 1 42d
service-mesh                    consumer-cwcsj      1/1 Running 1 42d
service-mesh                    postgres-bd266      1/1 Running 1 42d
service-mesh                    transformer-9krnp   1/1 Running 1 42d
service-mesh                    transformer-vnmkj   1/1 Running 1 42d
staging                         controller-9tnkq    1/1 Running 1 42d
staging                         dispatcher-n27j8    1/1 Running 1 42d
staging                         handler-8jq9n       1/1 Running 1 42d
staging                         processor-nhwgt     1/1 Running 1 42d
storage                         elasticsearch-g8j78 1/1 Running 1 42d
storage                         server-fnsc5        1/1 Running 1 42d
"""

VECTORS = [
    pytest.param(TRACING_PODS, TRACING_SIGN, id="tracing-5pods"),
    pytest.param(pods_from_listing(COMPAT_TINY), "pfp0v001607b76a0e9d3aeb4", id="compat-tiny"),
    pytest.param(pods_from_listing(COMPAT_SMALL), "pfp0v001567144e4a561bb5a", id="compat-small"),
    pytest.param(
        pods_from_listing(COMPAT_MEDIUM_20), "pfp0v00111a79869f24a9528", id="compat-medium-20"
    ),
    pytest.param(
        pods_from_listing(COMPAT_MEDIUM_50), "pfp0v0017e00808083a7fe66", id="compat-medium-50"
    ),
]


@pytest.mark.parametrize(("pods", "expected"), VECTORS)
def test_it_computes_the_upstream_fingerprint(pods: list[PodIdentity], expected: str) -> None:
    assert fingerprint(pods) == expected


@pytest.mark.parametrize(("pods", "expected"), VECTORS)
def test_the_order_of_the_pods_does_not_matter(pods: list[PodIdentity], expected: str) -> None:
    shuffled = list(pods)
    random.Random(12345).shuffle(shuffled)  # upstream TestCompatGoldenOrderIndependent's seed
    assert fingerprint(shuffled) == expected
    assert fingerprint(reversed(pods)) == expected


def test_the_vectors_read_every_pod_of_their_listing() -> None:
    sizes = [len(pods_from_listing(text)) for text in (COMPAT_TINY, COMPAT_SMALL)]
    assert sizes == [3, 10]
    assert len(pods_from_listing(COMPAT_MEDIUM_20)) == 20
    assert len(pods_from_listing(COMPAT_MEDIUM_50)) == 50


# --- properties of our own ------------------------------------------------------------------


def test_the_empty_set_fingerprints_to_the_hash_of_nothing() -> None:
    # Not an upstream vector: XXH64 of zero bytes with seed 0 is ef46db3751d8e999 (the
    # xxHash reference value), and an empty pod set writes zero bytes.
    assert fingerprint([]) == "pfp0v001ef46db3751d8e999"


def test_a_pod_listed_twice_counts_twice_as_upstream() -> None:
    assert fingerprint(TRACING_PODS + TRACING_PODS[:1]) != TRACING_SIGN


def test_the_namespace_and_name_boundary_matters() -> None:
    assert fingerprint([PodIdentity("ab", "c")]) != fingerprint([PodIdentity("a", "bc")])


def test_a_fingerprint_is_prefix_version_and_16_hex_digits() -> None:
    parsed = parse_fingerprint(TRACING_SIGN)
    assert (parsed.version, parsed.digest) == ("v001", "b92008c14168b3a6")
    assert is_fingerprint(TRACING_SIGN)


# --- reading a published fingerprint (upstream TestCheck and TestVersionCompatible) --------------


@pytest.mark.parametrize(
    "text",
    [
        pytest.param("x", id="too short"),
        pytest.param("wrngv001e477a4e3b2fc0ec6", id="wrong prefix"),
        pytest.param("pfp0vX", id="malformed version"),
        pytest.param("pfp0v001", id="no digest (NFD's test placeholder)"),
        pytest.param(
            "pfp0v001B92008C14168B3A6", id="upper-case digest (ours: Sign never writes it)"
        ),
        pytest.param("pfp0v001b92008c14168b3a6ff", id="digest too long (ours)"),
    ],
)
def test_it_rejects_a_malformed_fingerprint(text: str) -> None:
    with pytest.raises(MalformedFingerprint):
        parse_fingerprint(text)
    assert not is_fingerprint(text)


@pytest.mark.parametrize(
    "text",
    [
        pytest.param("pfp0v000e477a4e3b2fc0ec6", id="incompatible version"),
        pytest.param("pfp0xxxxe477a4e3b2fc0ec6", id="four characters, not ours"),
        pytest.param("pfp0v002e477a4e3b2fc0ec6", id="a future version"),
    ],
)
def test_it_rejects_an_unknown_version_by_name(text: str) -> None:
    with pytest.raises(IncompatibleVersion, match=r"version '.{4}' is not supported"):
        parse_fingerprint(text)
    assert not is_fingerprint(text)


def test_it_tells_a_matching_fingerprint_from_a_stale_one() -> None:
    assert fingerprint_matches(TRACING_SIGN, reversed(TRACING_PODS))
    assert not fingerprint_matches("pfp0v001e477abb123fc0ec1", TRACING_PODS)  # upstream's "wrong"
    assert not fingerprint_matches(TRACING_SIGN, TRACING_PODS[:-1])


def test_it_refuses_to_compare_with_an_incompatible_version() -> None:
    with pytest.raises(IncompatibleVersion):
        fingerprint_matches("pfp0v000e477a4e3b2fc0ec6", TRACING_PODS)


# --- the method attribute (scheduler-plugins store_test.go, autodetect) -------------------------


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        pytest.param(None, METHOD_ALL, id="no attr"),
        pytest.param("foobar", METHOD_ALL, id="unrecognized attr"),
        pytest.param("all", METHOD_ALL, id="all (old default)"),
        pytest.param("with-exclusive-resources", METHOD_WITH_EXCLUSIVE_RESOURCES, id="exclusive"),
    ],
)
def test_it_reads_the_method_as_the_scheduler_does(
    value: str | None, expected: FingerprintMethod
) -> None:
    assert method_from_attribute(value) is expected


def test_the_method_constants_are_the_attribute_values() -> None:
    assert (METHOD_ALL, METHOD_WITH_EXCLUSIVE_RESOURCES) == ("all", "with-exclusive-resources")


# --- the exporter's rule (resource-topology-exporter numalocality_test.go) ----------------------


@pytest.mark.parametrize(
    ("containers", "expected"),
    [
        pytest.param([], False, id="no containers"),
        pytest.param([AssignedResources()], False, id="no exclusive resources"),
        pytest.param([AssignedResources(cpu_ids=(0, 2, 4, 6))], True, id="exclusive CPUs"),
        pytest.param(
            [AssignedResources(devices=(AssignedDevice(("dev-1", "dev-2")),))],
            False,
            id="have devices no topology",
        ),
        pytest.param(
            [AssignedResources(devices=(AssignedDevice(("dev-1",), (-1,)),))],
            False,
            id="devices with any-NUMA locality (ours)",
        ),
        pytest.param(
            [AssignedResources(devices=(AssignedDevice(("dev-1",), (1,)),))],
            True,
            id="devices bound to a NUMA node (ours)",
        ),
        pytest.param(
            [AssignedResources(devices=(AssignedDevice((), (1,)),))],
            False,
            id="a device entry without ids (ours)",
        ),
        pytest.param(
            [AssignedResources(memory_numa_nodes=((),))], False, id="memory without topology (ours)"
        ),
        pytest.param(
            [AssignedResources(), AssignedResources(memory_numa_nodes=((0,),))],
            True,
            id="memory bound to a NUMA node in the second container (ours)",
        ),
    ],
)
def test_the_exporter_counts_pods_holding_numa_bound_resources(
    containers: list[AssignedResources], expected: bool
) -> None:
    assert exporter_counts_pod(containers) is expected


# --- the scheduler's rule (scheduler-plugins resourcerequests/exclusive_test.go) ----------------

GI = 1024**3
FPGA = "veryfast.io/fpga"


def _container(requests: dict[str, int], *, sidecar: bool = False) -> ContainerSpec:
    """A container whose limits equal its requests, as in every upstream case."""
    return ContainerSpec("cnt", requests, requests, restart_policy="Always" if sidecar else "")


GU = {"cpu": 4000, "memory": 2 * GI}


@pytest.mark.parametrize(
    ("pod", "expected"),
    [
        pytest.param(PodSpec("default", "pod"), False, id="no containers"),
        pytest.param(
            PodSpec("default", "pod", containers=(_container(GU),)),
            True,
            id="single-container-gu-no-devs",
        ),
        pytest.param(
            PodSpec("default", "pod", init_containers=(_container(GU),)),
            False,
            id="single-initcontainer-gu-no-devs",
        ),
        pytest.param(
            PodSpec("default", "pod", init_containers=(_container(GU, sidecar=True),)),
            True,
            id="single-sidecar-initcontainer-gu-no-devs",
        ),
        pytest.param(
            PodSpec("default", "pod", containers=(_container({FPGA: 1}),)),
            True,
            id="single-container-devs-only",
        ),
        pytest.param(
            PodSpec("default", "pod", init_containers=(_container({FPGA: 1}),)),
            False,
            id="single-initcontainer-devs-only",
        ),
        pytest.param(
            PodSpec("default", "pod", init_containers=(_container({FPGA: 1}, sidecar=True),)),
            True,
            id="single-sidecar-initcontainer-devs-only",
        ),
        pytest.param(
            PodSpec(
                "default",
                "pod",
                containers=(_container({"cpu": 8000, "memory": 16 * GI, FPGA: 1}),),
            ),
            True,
            id="single-container-gu-core-and-devs",
        ),
        pytest.param(
            PodSpec("default", "pod", containers=(_container({"cpu": 8000, FPGA: 1}),)),
            True,
            id="single-container-nongu-cpus-and-devs",
        ),
        pytest.param(
            PodSpec("default", "pod", containers=(_container({"cpu": 8000}),)),
            False,
            id="single-container-nongu-cpus-only",
        ),
        pytest.param(
            PodSpec("default", "pod", containers=(_container({"cpu": 1500, "memory": GI}),)),
            True,
            id="gu with fractional cpu still pins its memory (ours)",
        ),
        pytest.param(
            PodSpec("default", "pod", containers=(_container({"cpu": 1500}),)),
            False,
            id="fractional cpu alone is shared (ours, Burstable)",
        ),
    ],
)
def test_the_scheduler_counts_pods_requesting_exclusive_resources(
    pod: PodSpec, expected: bool
) -> None:
    nrt_resources = {FPGA}
    assert (
        scheduler_counts_pod(pod.qos_class, pod.containers, pod.init_containers, nrt_resources)
        is expected
    )


@pytest.mark.parametrize(
    ("nrt_resources", "expected"),
    [
        pytest.param({FPGA}, True, id="device-in-nrt-is-exclusive"),
        pytest.param(set(), False, id="device-not-in-nrt-is-not-exclusive"),
    ],
)
def test_a_device_is_exclusive_only_when_the_nrt_publishes_it(
    nrt_resources: set[str], expected: bool
) -> None:
    pod = PodSpec("default", "pod", containers=(_container({FPGA: 1}),))
    counted = scheduler_counts_pod(pod.qos_class, pod.containers, (), nrt_resources)
    assert counted is expected


def test_a_guaranteed_pod_with_whole_cpus_counts_whatever_the_nrt() -> None:
    pod = PodSpec("default", "pod", containers=(_container(GU),))
    assert scheduler_counts_pod(pod.qos_class, pod.containers, (), set())
