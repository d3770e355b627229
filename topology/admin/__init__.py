"""Admin: observed state is read-only (it comes from the cluster); desired policy is editable.

One module per topic; importing them registers their ModelAdmins.
"""

from topology.admin import apply, dra, mirror, policies, qos, scheduling  # noqa: F401
