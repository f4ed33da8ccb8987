"""Proven bounds that need no model."""

from __future__ import annotations

from .instance import Instance


def trivial_bound(instance: Instance) -> float:
    """A difference no assignment can exceed: 1 for every bounded metric, the full weight for DCG."""
    metric = instance.metric
    if metric.family == "DCG":
        length = max(len(instance.a), len(instance.b))
        return sum(metric.rank_weights(length)) * metric.unit_gain(instance.max_grade, instance.grading)
    return 1.0 + (1.0 if instance.residual else 0.0)
