"""Observability (issue 33): the Prometheus metrics and the figures history."""
