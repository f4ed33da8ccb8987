"""DCG@k, SDCG@k (Tan & Clarke's "nDCG") and nDCG@k (recall-based, Moffat)."""

from __future__ import annotations

from . import proofs
from .base import Metric, Reduction, ideal_gains, log2_discount, register


class DotProduct(Metric):
    """Static weighted-precision metrics: score = sum_i W(i) * unit_gain(grade_i), W non-increasing."""

    DOT_PRODUCT_REDUCTIONS = {Reduction.WORSE_ONLY_ZERO: proofs.WORSE_ONLY_DOT_PRODUCT,
                              Reduction.RANK_DOMINANCE: proofs.RANK_DOMINANCE_DECREASING_WEIGHTS}

    def rank_weights(self, depth: int) -> list[float]:
        return [log2_discount(i) for i in range(1, depth + 1)]

    def unit_gain(self, grade: int, grading) -> float:
        return self.gain(grade, grading)

    def score(self, ranking, grades, grading) -> float:
        grades_at = self.grades_of(ranking, grades)
        weights = self.rank_weights(len(grades_at))
        return sum((w * self.unit_gain(g, grading) for w, g in zip(weights, grades_at)), 0.0)


@register
class DCG(DotProduct):
    family = "DCG"
    doc = "DCG@k = sum_{i<=k} gain_i / log2(i+1)"
    references = {"none": "ir_measures' DCG is not trec_eval's; checked through nDCG and SDCG"}
    examples = ("DCG@5", "DCG")
    reductions = DotProduct.DOT_PRODUCT_REDUCTIONS

    def max_score(self, depth: int, grading) -> float:
        """Every counted rank at the top grade."""
        return sum(self.rank_weights(depth)) * self.unit_gain(grading.max_grade, grading)


@register
class SDCG(DotProduct):
    family = "SDCG"
    needs_cutoff = True
    doc = "SDCG@k = DCG@k / (gain(G) * sum_{i<=k} 1/log2(i+1))"
    references = {"cwl_eval": "SDCG(max_rel=G)@k"}
    examples = ("SDCG@5",)
    reductions = DotProduct.DOT_PRODUCT_REDUCTIONS

    def rank_weights(self, depth: int) -> list[float]:
        scale = sum(log2_discount(i) for i in range(1, self.cutoff + 1))
        return [log2_discount(i) / scale for i in range(1, depth + 1)]

    def unit_gain(self, grade: int, grading) -> float:
        return self.gain(grade, grading) / self.top_gain(grading)


@register
class NDCG(Metric):
    family = "nDCG"
    recall_based = True
    doc = "nDCG@k = DCG@k / IDCG@k, IDCG over the collection's positive-gain documents"
    trec_eval = {"ndcg_cut": True, "ndcg": False}
    references = {"pytrec_eval": "nDCG@k", "trec_eval": "ndcg_cut_k"}
    examples = ("nDCG@5", "nDCG", "nDCG@3")
    reductions = {Reduction.WORSE_ONLY_ZERO: proofs.WORSE_ONLY_RATIO,
                  Reduction.RANK_DOMINANCE: proofs.RANK_DOMINANCE_DECREASING_WEIGHTS,
                  Reduction.NET_WEIGHT_ZERO: proofs.NET_WEIGHT_NDCG}

    def net_weights(self, depth: int) -> list[float]:
        """The numerator's weight of each rank (the discount), for NET_WEIGHT_ZERO."""
        return [log2_discount(i) for i in range(1, depth + 1)]

    def ideal_dcg(self, grades, grading, depth: int | None = None) -> float:
        ideal = ideal_gains(grades, self, grading)
        if depth is None:
            depth = self.cutoff if self.cutoff is not None else len(ideal)
        return sum(g * log2_discount(i) for i, g in enumerate(ideal[:depth], start=1))

    def score(self, ranking, grades, grading) -> float:
        grades_at = self.grades_of(ranking, grades)
        dcg = sum(self.gain(g, grading) * log2_discount(i) for i, g in enumerate(grades_at, start=1))
        ideal = self.ideal_dcg(grades, grading)
        return dcg / ideal if ideal > 0 else 0.0
