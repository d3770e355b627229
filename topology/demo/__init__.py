"""A realistic demo cluster as Kubernetes objects, and a checker that its numbers add up.

`generate_demo_objects` is plain Python (no Django): it returns the items `kubectl get
-o json` would list for nodes, NodeResourceTopologies of every flavour, pods,
Koordinator Reservations, the slo-controller-config ConfigMap and namespaces.
"""

from .cluster import generate_demo_objects
from .invariants import check_demo_invariants

__all__ = ["check_demo_invariants", "generate_demo_objects"]
