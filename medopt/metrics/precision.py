"""P@k and RR: binary metrics (relevant iff grade >= rel)."""

from __future__ import annotations

from . import proofs
from .base import Metric, Param, Reduction, positive_int, register, table_of


REL = Param(int, 1, positive_int, "minimum grade counted as relevant")


@register
class Precision(Metric):
    family = "P"
    rational = True
    PARAMS = {"rel": REL}
    needs_cutoff = True
    binary = True
    doc = "P@k = (1/k) sum_{i<=k} b_i"
    trec_eval = {"P": True}
    references = {"pytrec_eval": "P@k", "trec_eval": "P_k"}
    examples = ("P@5", "P(rel=2)@3")
    reductions = {Reduction.WORSE_ONLY_ZERO: proofs.WORSE_ONLY_DOT_PRODUCT,
                  Reduction.RANK_DOMINANCE: proofs.RANK_DOMINANCE_DECREASING_WEIGHTS}

    def rank_weights(self, depth: int) -> list[float]:
        return [1.0 / self.cutoff] * depth

    def unit_gain(self, grade: int, grading) -> float:
        return 1.0 if self.is_relevant(grade) else 0.0

    def score(self, ranking, grades, grading) -> float:
        is_relevant = table_of(self, "is_relevant")
        return sum(1 for g in self.grades_of(ranking, grades) if is_relevant[g]) / self.cutoff


@register
class ReciprocalRank(Metric):
    family = "RR"
    rational = True
    PARAMS = {"rel": REL}
    binary = True
    doc = "RR@k = 1 / first relevant rank <= k, 0 if none"
    trec_eval = {"recip_rank": False}
    references = {"pytrec_eval": "RR", "msmarco": "RR@k", "trec_eval": "recip_rank"}
    examples = ("RR@5", "RR", "RR(rel=2)@4")
    reductions = {Reduction.WORSE_ONLY_ZERO: proofs.WORSE_ONLY_CASCADE,
                  Reduction.RANK_DOMINANCE: proofs.RANK_DOMINANCE_CASCADE,
                  Reduction.BETTER_ONLY_TOP: proofs.BETTER_ONLY_CASCADE,
                  Reduction.SHARED_ENDS_ZERO: proofs.SHARED_ENDS_CASCADE}

    def score(self, ranking, grades, grading) -> float:
        is_relevant = table_of(self, "is_relevant")
        for rank, grade in enumerate(self.grades_of(ranking, grades), start=1):
            if is_relevant[grade]:
                return 1.0 / rank
        return 0.0
