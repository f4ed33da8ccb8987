"""Proven bounds that need no model."""

from __future__ import annotations

from .instance import Instance


def trivial_bound(instance: Instance) -> float:
    """A difference no assignment can exceed: the largest score of the longer cut list (1 for every
    metric bounded by 1; Metric.max_score), plus the RBP residual's 1."""
    length = max(len(instance.a), len(instance.b))
    return instance.metric.max_score(length, instance.grading) + (1.0 if instance.residual else 0.0)
