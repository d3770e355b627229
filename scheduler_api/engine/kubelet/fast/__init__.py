"""The kubelet's fast paths: the same answers as `kubelet/reference/`, by counting."""
