"""A desired node policy: validated against the node as observed, diffed field by field,
turned into the exact merge patch and node annotation Topolens writes back (pure)."""
