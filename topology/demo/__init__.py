"""A realistic demo cluster as Kubernetes objects (the checker that its numbers add up is
the test suite's: `tests/demo_checks`).

`generate_demo_objects` is plain Python (no Django): it returns the items `kubectl get
-o json` would list for nodes, NodeResourceTopologies of every flavour, pods,
Koordinator Reservations, the slo-controller-config ConfigMap, namespaces, and a DRA
ResourceSlice with a ResourceClaim (`dra`). Two nodes show kubelet features
(`features`): one runs the Static Memory Manager with hugepages pools
(`memory_manager`), one publishes its CPUs' uncore caches through the DRA CPU driver
(`dra_cpu`) to a static CPU manager that aligns by them.
"""

from .cluster import generate_demo_objects

__all__ = ["generate_demo_objects"]
