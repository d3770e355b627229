"""Topolens's services, grouped by feature; views, tasks and commands call these.

- `mirror/`: the mirror of each cluster: import and export, the writers every import and
  sync goes through, removals, content hashes, the mirror version, derived node figures,
  each CPU's state, consistency checks.
- `whatif/`: what-if questions against the mirror: the service, the dashboard page, the
  scheduler comparison, the engine snapshot and answer caches, scheduler profiles.
- `policies/`: desired node policies and the QoS draft, their preview, and the audited
  write-back to the cluster (`policies/writeback/`).
- `sync/`: how clusters are reached and the Celery work that keeps them synced.
- `rate_limits`: the throttles every surface shares.

Pure domain rules (which state a CPU is in, resctrl as koordlet applies it) live in
`topology.domain`, not here.
"""
