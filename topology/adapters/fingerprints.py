"""A fingerprint per node of everything the engine snapshot reads for it.

Rebuilding a 5,000-node snapshot takes seconds, and a live sync changes the mirror
every second; most nodes, though, are untouched between two versions. A node's
fingerprint is an md5 over its rows as stored: the Node's and its NRT's content hashes
(each the digest of the whole parsed object or, as the sync stores them for NRTs and
pods, of the object's uid and resourceVersion, which name one content: see
`hashing.version_digest`), its CPU reservation, the content hashes of the pods on it,
its CPU allocations and its DRA ResourceSlices (the CPU driver's publish its uncore
caches). Two equal fingerprints mean the snapshot code would read the same values for
that node, so its NodeSnapshot can be kept.

A node's pods and allocations are folded in without sorting them: the count of rows
and the XOR of a 64-bit hash of each row (its identity and content). Any change to a
row changes that row's hash, and so the XOR, except with odds of 2^-64; the rows of one
node are distinct (namespace and name are hashed in), so no two cancel. Sorting and
concatenating them in SQL was most of the query's time: it runs before every what-if
on a mirror that changed. Hashing them was most of what was left, so each row keeps
its hash (`row_hash`, a stored generated column: `topology.models.row_hash`), read
from the node-name index.

Computed by PostgreSQL in one query; elsewhere (SQLite, the embedded default, whose
clusters are small) there are no fingerprints and snapshots are rebuilt whole.
"""

from __future__ import annotations

from django.db import connection

from topology.models import (
    Cluster,
    Node,
    NodeCPUReservation,
    NodeTopology,
    Pod,
    PodAllocation,
    Reservation,
    ResourceSlice,
)

NodeFingerprints = dict[str, str]

_QUERY = f"""
WITH pods AS (
    SELECT node_name, count(*) AS n, bit_xor(row_hash) AS x
    FROM {Pod._meta.db_table} WHERE cluster_id = %(cluster)s GROUP BY node_name
), allocations AS (
    SELECT node_name, count(*) AS n, bit_xor(row_hash) AS x
    FROM {PodAllocation._meta.db_table} WHERE cluster_id = %(cluster)s GROUP BY node_name
), slices AS (
    SELECT node_name, count(*) AS n,
           bit_xor(hashtextextended(name || '=' || content_hash || '@' || resource_version, 0)) AS x
    FROM {ResourceSlice._meta.db_table} WHERE cluster_id = %(cluster)s GROUP BY node_name
)
SELECT n.name,
       md5(concat_ws('|', n.content_hash,
                     coalesce(t.content_hash || ' ' || t.api_version, '-'),
                     coalesce(r.reserved_cpus || ' ' || r.resolved_cpus || ' '
                              || r.apply_policy || ' ' || r.resources::text, '-'),
                     coalesce(p.n || ':' || p.x, '-'), coalesce(a.n || ':' || a.x, '-'),
                     coalesce(s.n || ':' || s.x, '-')))
FROM {Node._meta.db_table} AS n
LEFT JOIN {NodeTopology._meta.db_table} AS t ON t.node_id = n.id
LEFT JOIN {NodeCPUReservation._meta.db_table} AS r ON r.node_id = n.id
LEFT JOIN pods AS p ON p.node_name = n.name
LEFT JOIN allocations AS a ON a.node_name = n.name
LEFT JOIN slices AS s ON s.node_name = n.name
WHERE n.cluster_id = %(cluster)s
ORDER BY n.name
"""


def node_fingerprints(cluster: Cluster) -> NodeFingerprints | None:
    """Node name → fingerprint, in the order snapshots list nodes; None without PostgreSQL."""
    if connection.vendor != "postgresql":
        return None
    with connection.cursor() as cursor:
        cursor.execute(_QUERY, {"cluster": cluster.pk})
        return {name: digest for name, digest in cursor.fetchall()}


_RESERVATIONS_QUERY = f"""
SELECT count(*) || ':' || coalesce(bit_xor(hashtextextended(
           name || '=' || content_hash || '@' || resource_version, 0)), 0)
FROM {Reservation._meta.db_table} WHERE cluster_id = %(cluster)s
"""


def reservations_fingerprint(cluster: Cluster) -> str | None:
    """One fingerprint of all the cluster's Reservations (folded like a node's pods);
    None without PostgreSQL. Equal: the snapshot's reservations can be kept as they are."""
    if connection.vendor != "postgresql":
        return None
    with connection.cursor() as cursor:
        cursor.execute(_RESERVATIONS_QUERY, {"cluster": cluster.pk})
        return str(cursor.fetchone()[0])
