"""Live sync: keep each cluster's mirror equal to the cluster through the kubernetes client.

The informer contract, module by module:

- `client`: the official client with client-side timeouts and no hidden retries;
- `discovery` and `resources`: what the cluster serves, and at which version to read it;
- `lister`: paged lists (`limit` / `continue`), retried with backoff (`backoff`);
- `prefetch` and `ahead`: a session's full list is fetched and decoded in one thread,
  and parsed and hashed where it changed (`versions`) in another, so that the server's
  time, this CPU work and the writer's database waits overlap; `interpreter`: the
  garbage collector and the GIL's switch interval while full lists run;
- `watcher`: a thread per collection watching from the list's resourceVersion, with
  bookmarks, 410 → re-list, resume after a dropped stream, backoff with jitter;
- `messages`: what those threads hand to the database side, in order;
- `writer`, `apply`, `accounting`: the one thread that writes, in coalesced batches,
  through the import's parsers and writers; malformed objects become sync errors; a
  page whose objects all have their stored resourceVersion costs no query at all;
- `session` and `lease`: one sync of one cluster (once, or list-then-watch), one at a time;
- `state`, `freshness`, `report`: sync state per collection, data age, what a run did.
"""
