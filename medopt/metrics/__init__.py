"""Metrics: one module per family, each declaring itself (``base.register``): name, parameters
with defaults, aliases and trec_eval names, binary or graded, recall-based or not, the reduction
facts proved for it and the reference implementations it is cross-checked against.  Every module
of this package is imported here, so a new family needs only its module.
"""

from __future__ import annotations

import importlib
import pkgutil

from .base import REGISTRY, Grading, Metric, Reduction, declared_reductions, default_max_grade, is_character_metric
from .conventions import PER_TOPIC, judged_at, resolve_max_grade
from .grammar import metric_names, parse_metric

for _module in pkgutil.iter_modules(__path__):
    if _module.name not in ("base", "grammar", "proofs"):
        importlib.import_module(f"{__name__}.{_module.name}")

__all__ = ["Metric", "Grading", "Reduction", "parse_metric", "default_max_grade", "PER_TOPIC", "resolve_max_grade", "judged_at", "REGISTRY", "metric_names",
           "declared_reductions", "is_character_metric"]
