"""Moffat's self-normalised metrics (seed 003, "Seven numeric properties", section 3): SN_DCG@k and
SN_AP@k, each normalised by what its own top k holds, not by the collection.

SN_DCG@k = DCG@k / DCG@k of the same top-k gains sorted decreasing, 0 when no gain is in the top k;
SN_AP@k = (1/R_k) sum_{i<=k} b_i P@i, R_k the relevant documents in the top k, 0 when R_k = 0.
Moffat's examples: SN-DCG@5 of "10100" is (1 + 0.5) / (1 + 0.63) = 0.92 and of "10101" 1.89 / 2.13 =
0.88; SN-AP@5 of "10000" is 1 and of "10001" 0.7 (tests/exact/test_new_measures_b.py).

No reduction is declared.  Both are non-convergent (Moffat): a relevant document added to a list
can lower its score ("10000" -> "10001" above), so neither "a worse-only document at 0" nor "a
better-only one at G" holds, and the rank-dominance swap can move a grade into or out of a list's
top k, which changes its own denominator.
"""

from __future__ import annotations

from .ap import sum_of_precisions
from .base import Metric, log2_discount, register, table_of
from .dcg import GAIN_PARAMS, GainParameters
from .precision import REL


def discounted(gains) -> float:
    return sum((g * log2_discount(i) for i, g in enumerate(gains, start=1)), 0.0)


@register
class SNDCG(GainParameters, Metric):
    family = "SN_DCG"
    PARAMS = GAIN_PARAMS
    needs_cutoff = True
    doc = "SN_DCG@k = DCG@k / DCG@k of the same top-k gains sorted decreasing; 0 with no gain in the top k (Moffat)"
    aliases = ("SNDCG",)
    references = {"pytrec_eval": "nDCG@k on the run cut at k, its qrels restricted to the run's top k "
                                 "(the ideal of trec_eval's ndcg_cut over exactly those documents)"}
    examples = ("SN_DCG@5", "SN_DCG(gains={2:3})@4")

    def score(self, ranking, grades, grading) -> float:
        grades_at = self.grades_of(ranking, grades)
        gain = table_of(self, "gain", grading)
        gains = [gain[g] for g in grades_at]
        ideal = discounted(sorted(gains, reverse=True))
        return discounted(gains) / ideal if ideal > 0 else 0.0


@register
class SNAP(Metric):
    family = "SN_AP"
    PARAMS = {"rel": REL}
    needs_cutoff = True
    binary = True
    doc = "SN_AP@k = (1/R_k) sum_{i<=k} b_i P@i, R_k = relevant documents in the top k; 0 when R_k = 0 (Moffat)"
    aliases = ("SNAP",)
    references = {"cwl_eval": "AP(rel=r) on the run cut at k (C/W/L's AP divides by the relevant documents "
                              "of the ranking it is given)"}
    examples = ("SN_AP@5", "SN_AP(rel=2)@4")

    def score(self, ranking, grades, grading) -> float:
        is_relevant = table_of(self, "is_relevant")
        relevant = [is_relevant[g] for g in self.grades_of(ranking, grades)]
        found = sum(relevant)
        return sum_of_precisions(relevant) / found if found else 0.0
