"""Editing desired state: validation, diffs and the exact bodies Topolens writes back,
by subject: `node_policies/` (a node's labels and reservation annotation),
`slo_config/` (Koordinator's slo-controller-config), `reservation` (a Reservation made
from a what-if). The forms that edit them live in `topology.forms`."""
