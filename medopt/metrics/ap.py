"""SSP@k (Tan & Clarke's "MAP"), SP@k (the sum of precisions, k SSP@k), AP@k (trec_eval) and
AP(norm=min)@k (Sakai)."""

from __future__ import annotations

from . import proofs
from .base import Metric, Param, Reduction, count_relevant, register, table_of
from .precision import REL


def sum_of_precisions(relevant: list[bool]) -> float:
    found, total = 0, 0.0
    for rank, is_rel in enumerate(relevant, start=1):
        if is_rel:
            found += 1
            total += found / rank
    return total


@register
class SSP(Metric):
    family = "SSP"
    PARAMS = {"rel": REL}
    needs_cutoff = True
    binary = True
    doc = "SSP@k = (1/k) sum_{i<=k} b_i P@i"
    references = {"none": "no library computes Tan & Clarke's SSP (sum of precisions over k)"}
    examples = ("SSP@5", "SSP(rel=2)@4")
    reductions = {Reduction.WORSE_ONLY_ZERO: proofs.WORSE_ONLY_SUM_OF_PRECISIONS,
                  Reduction.RANK_DOMINANCE: proofs.RANK_DOMINANCE_DECREASING_WEIGHTS}

    def score(self, ranking, grades, grading) -> float:
        is_relevant = table_of(self, "is_relevant")
        return sum_of_precisions([is_relevant[g] for g in self.grades_of(ranking, grades)]) / self.cutoff


@register
class SP(Metric):
    family = "SP"
    PARAMS = {"rel": REL}
    needs_cutoff = True
    binary = True
    doc = "SP@k = sum_{i<=k} b_i P@i (sum of precisions, unnormalised; = k SSP@k)"
    references = {"none": "no library computes the unnormalised sum of precisions; it is k SSP@k"}
    examples = ("SP@5", "SP(rel=2)@4")
    reductions = {Reduction.WORSE_ONLY_ZERO: proofs.WORSE_ONLY_SUM_OF_PRECISIONS,
                  Reduction.RANK_DOMINANCE: proofs.RANK_DOMINANCE_DECREASING_WEIGHTS}

    def max_score(self, depth: int, grading) -> float:
        """Every counted rank relevant: P@i = 1 at each."""
        return float(depth)

    def score(self, ranking, grades, grading) -> float:
        is_relevant = table_of(self, "is_relevant")
        return sum_of_precisions([is_relevant[g] for g in self.grades_of(ranking, grades)])


@register
class AP(Metric):
    family = "AP"
    PARAMS = {
        "rel": REL,
        "norm": Param(str, "R", lambda v: v in ("R", "min"), "R (trec_eval) or min (min(k, R), Sakai)"),
    }
    recall_based = True
    binary = True
    doc = "AP@k = (1/R) sum_{i<=k} b_i P@i; norm=min divides by min(k, R)"
    aliases = ("MAP",)
    trec_eval = {"map_cut": True, "map": False}
    references = {"pytrec_eval": "AP@k", "trec_eval": "map_cut_k"}
    examples = ("AP@5", "AP", "AP(norm=min)@4", "AP(rel=2)@5")
    reductions = {Reduction.WORSE_ONLY_ZERO: proofs.WORSE_ONLY_RATIO,
                  Reduction.RANK_DOMINANCE: proofs.RANK_DOMINANCE_DECREASING_WEIGHTS}

    def normaliser(self, relevant_count: int) -> int:
        if self.p("norm") == "min" and self.cutoff is not None:
            return min(self.cutoff, relevant_count)
        return relevant_count

    def score(self, ranking, grades, grading) -> float:
        denominator = self.normaliser(count_relevant(grades, self))
        if denominator == 0:
            return 0.0
        is_relevant = table_of(self, "is_relevant")
        relevant = [is_relevant[g] for g in self.grades_of(ranking, grades)]
        return sum_of_precisions(relevant) / denominator
