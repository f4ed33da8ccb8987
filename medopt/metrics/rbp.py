"""Rank-biased precision (Moffat & Zobel), gains scaled by gain(G)."""

from __future__ import annotations

from .base import Param, probability, register
from .dcg import DotProduct


@register
class RBP(DotProduct):
    family = "RBP"
    PARAMS = {"p": Param(float, 0.8, probability, "persistence, 0 < p < 1")}
    doc = "RBP(p) = (1-p) sum_i (gain_i / gain(G)) p^(i-1)"
    references = {"cwl_eval": "RBP(p,rel)", "trec_eval": "rbp"}
    examples = ("RBP(p=0.8)", "RBP(p=0.5)@5")
    reductions = DotProduct.DOT_PRODUCT_REDUCTIONS

    def rank_weights(self, depth: int) -> list[float]:
        p = self.p("p")
        return [(1 - p) * p ** (i - 1) for i in range(1, depth + 1)]

    def unit_gain(self, grade: int, grading) -> float:
        return self.gain(grade, grading) / self.top_gain(grading)

    def tail_weight(self, evaluated: int) -> float:
        """Weight of the ranks after ``evaluated`` up to the cutoff (or infinity)."""
        p = self.p("p")
        end = p ** self.cutoff if self.cutoff is not None else 0.0
        return max(0.0, p ** evaluated - end)
