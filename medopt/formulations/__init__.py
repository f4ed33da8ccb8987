"""Explicit mathematical programs for MED, one module per metric family.

A formulation builds, for one direction (A over B, or B over A), a Pyomo model
whose maximum is that direction's largest score difference.  Families whose
objective is a ratio (recall-normalised metrics) say so and offer two exact
strategies: enumerate the denominator (``cases``) or Dinkelbach iteration
(``build(..., lam=...)`` with objective N - lam * D).  See models/ for the math.
"""

from __future__ import annotations

from ..errors import MedoptError
from .base import Formulation

_FAMILIES: dict[str, str] = {
    "P": "dot_product", "DCG": "dot_product", "SDCG": "dot_product", "RBP": "dot_product",
    "nDCG": "ndcg",
    "SSP": "precision_sums", "AP": "precision_sums",
    "RR": "cascade", "ERR": "cascade",
    "Q": "q_measure",
}


def formulation_for(metric) -> Formulation:
    import importlib

    module = _FAMILIES.get(metric.family)
    if module is None:
        raise MedoptError(f"no exact formulation for {metric}")
    try:
        loaded = importlib.import_module(f"{__name__}.{module}")
    except ModuleNotFoundError as error:
        if error.name == f"{__name__}.{module}":
            raise MedoptError(f"no exact formulation for {metric} yet") from None
        raise
    return loaded.FORMULATION
