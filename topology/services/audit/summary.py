"""The stored audit of a cluster, summed up for the API and the page (issue 32)."""

from __future__ import annotations

from typing import Any

from topology.models import AgreementSample, Cluster
from topology.services.audit.predictions import prediction_counts
from topology.services.audit.replay import APPROXIMATION

HISTORY_POINTS = 500  # the most recent samples a summary carries


def agreement_summary(cluster: Cluster) -> dict[str, Any]:
    """The last audit's rates by system, the rates after each audit (oldest first), and
    the tracked predictions per status."""
    samples = list(
        AgreementSample.objects.filter(cluster=cluster)
        .order_by("-taken_at")
        .values("taken_at", "rates")[:HISTORY_POINTS]
    )
    samples.reverse()
    last = samples[-1] if samples else None
    return {
        "rates": last["rates"] if last else {},
        "computed_at": last["taken_at"] if last else None,
        "data_age_seconds": cluster.diagnosed_data_age_seconds,
        "approximation": APPROXIMATION,
        "history": samples,
        "predictions": prediction_counts(cluster),
    }
