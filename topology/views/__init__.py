"""Dashboard views: thin. Each resolves its cluster, calls selectors and figure
builders, and renders; every page needs a login (staff login for now)."""
