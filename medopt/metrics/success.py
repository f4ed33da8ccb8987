"""Success@k (HIT@k; trec_eval success.k, ir_measures Success): 1 if a relevant document is in the
top k, else 0."""

from __future__ import annotations

from . import proofs
from .base import Metric, Reduction, register
from .precision import REL


@register
class Success(Metric):
    family = "Success"
    PARAMS = {"rel": REL}
    needs_cutoff = True
    binary = True
    doc = "Success@k = 1 if some b_i = 1 for i <= k, else 0"
    aliases = ("HIT",)
    trec_eval = {"success": True}
    references = {"pytrec_eval": "Success@k", "trec_eval": "success_k"}
    examples = ("Success@5", "Success(rel=2)@3")
    reductions = {Reduction.WORSE_ONLY_ZERO: proofs.WORSE_ONLY_SUCCESS,
                  Reduction.BETTER_ONLY_TOP: proofs.BETTER_ONLY_SUCCESS,
                  Reduction.RANK_DOMINANCE: proofs.RANK_DOMINANCE_SUCCESS}

    def score(self, ranking, grades, grading) -> float:
        return 1.0 if any(self.is_relevant(g) for g in self.grades_of(ranking, grades)) else 0.0
