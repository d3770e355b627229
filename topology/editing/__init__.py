"""Editing desired state: validation, diffs and the exact bodies Topolens writes back."""
