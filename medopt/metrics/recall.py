"""R@k (Recall; trec_eval recall.k) and Rprec / Rprec@k (trec_eval Rprec; Moffat's RPrec@k):
relevant documents counted down to a cut, over a divisor, both set by R (recall-based, binary).

Rprec has no WORSE_ONLY fact: raising a Y-only document raises R, which moves the cut of both
lists, and X's score can rise with it (X = n r, Y = n' n'' y with r judged relevant and y unjudged:
y at 0 gives R = 1 and a difference of 0, y relevant gives R = 2 and Rprec(X) - Rprec(Y) = 1/2).
"""

from __future__ import annotations

from . import proofs
from .base import Metric, Reduction, count_relevant, register
from .precision import REL


@register
class Recall(Metric):
    family = "R"
    PARAMS = {"rel": REL}
    needs_cutoff = True
    recall_based = True
    binary = True
    doc = "R@k = (1/R) sum_{i<=k} b_i, 0 when R = 0"
    aliases = ("Recall",)
    trec_eval = {"recall": True}
    references = {"pytrec_eval": "R@k", "trec_eval": "recall_k"}
    examples = ("R@5", "R(rel=2)@4")
    reductions = {Reduction.WORSE_ONLY_ZERO: proofs.WORSE_ONLY_RATIO,
                  Reduction.NET_WEIGHT_ZERO: proofs.NET_WEIGHT_RECALL,
                  Reduction.RANK_DOMINANCE: proofs.RANK_DOMINANCE_CUT_COUNT}

    def net_weights(self, depth: int) -> list[float]:
        """The numerator's weight of each rank of a cut list, for NET_WEIGHT_ZERO."""
        return [1.0] * depth

    def cut(self, relevant_count: int) -> int | None:
        """The ranks counted (None: the whole cut list) and, below, the divisor, given R."""
        return None

    def divisor(self, relevant_count: int) -> int:
        return relevant_count

    def score(self, ranking, grades, grading) -> float:
        relevant_count = count_relevant(grades, self)
        if relevant_count == 0:
            return 0.0
        counted = self.grades_of(ranking, grades)[: self.cut(relevant_count)]
        return sum(1 for g in counted if self.is_relevant(g)) / self.divisor(relevant_count)


@register
class RPrecision(Recall):
    family = "Rprec"
    needs_cutoff = False
    doc = "Rprec = #relevant in the top R / R; Rprec@k: #relevant in the top min(k, R) / min(k, R); 0 when R = 0"
    aliases = ("RPrec",)
    trec_eval = {"Rprec": False}
    references = {"pytrec_eval": "Rprec", "trec_eval": "Rprec"}
    examples = ("Rprec", "Rprec@4", "Rprec(rel=2)@5")
    reductions = {Reduction.RANK_DOMINANCE: proofs.RANK_DOMINANCE_CUT_COUNT}

    def cut(self, relevant_count: int) -> int:
        return relevant_count if self.cutoff is None else min(self.cutoff, relevant_count)

    def divisor(self, relevant_count: int) -> int:
        return self.cut(relevant_count)
