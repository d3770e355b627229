"""A fake Kubernetes API server for the sync tests and the sync benchmark."""

from .server import FakeKubeServer, write_kubeconfig
from .store import FakeCluster
from .wire import Request

__all__ = ["FakeCluster", "FakeKubeServer", "Request", "write_kubeconfig"]
