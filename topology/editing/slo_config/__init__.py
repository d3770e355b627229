"""Koordinator's `slo-controller-config` (resource-qos-config: resctrl, cpuQOS, memoryQOS
per QoS class): its keys and types, validation, node selectors, per-node preview. Named
for the ConfigMap, not "qos", so that it is not taken for a pod's QoS class (pure)."""
