"""The Topolens allocation engine: pure Python, no Django.

It reproduces what the real placement components decide (kubelet Topology
Manager and static CPU manager, scheduler-plugins NodeResourceTopologyMatch,
crane-scheduler and koord-scheduler) from immutable snapshot values.
"""
