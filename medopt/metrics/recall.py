"""R@k (Recall; trec_eval recall.k) and Rprec / Rprec@k (trec_eval Rprec; Moffat's RPrec@k):
relevant documents counted down to a cut, over a divisor, both set by R (recall-based, binary).

Rprec has no WORSE_ONLY fact: raising a Y-only document raises R, which moves the cut of both
lists, and X's score can rise with it (X = n r, Y = n' n'' y with r judged relevant and y unjudged:
y at 0 gives R = 1 and a difference of 0, y relevant gives R = 2 and Rprec(X) - Rprec(Y) = 1/2).
"""

from __future__ import annotations

from . import proofs
from .base import Metric, Reduction, binary_sides, count_relevant, register, table_of
from .precision import REL


@register
class Recall(Metric):
    family = "R"
    rational = True
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

    def closed_form_ends(self, instance) -> dict[str, tuple[float, dict]]:
        """Each direction's largest R@k(X) - R@k(Y) without relevance limits, with a maximising
        assignment (unjudged document -> G or 0): {"a": X = A, "b": X = B}; "b"'s is minus the low end.

        Proof.  Let C(L) be the relevant documents (grade >= rel) of L's top k and R those of the
        collection (judged anywhere, plus the unjudged documents of the two top ks assigned relevant).
        The difference is f(N, R) = N / R with N = C(X) - C(Y), and 0 when R = 0 (then N = 0 too).
        0 <= C(X), C(Y) <= R (a top k's relevant documents are the collection's), so |N| <= R under
        every assignment.  Only whether each unjudged document is relevant matters (G or 0 stands for
        any grade on its side of rel; when G < rel none can be relevant, and the counts below are 0).
        With x of X's only, y of Y's only and s of the shared unjudged documents relevant,
        N = N0 + x - y and R = J + x + y + s (N0, J: the judged part).  One more document relevant moves
        (N, R), |N| <= R, to:
        - X's only, (N + 1, R + 1): R = 0 gives 0 -> 1; else (N+1)/(R+1) - N/R = (R - N)/(R (R+1)) >= 0.
        - Y's only, (N - 1, R + 1): R = 0 gives 0 -> -1; else (N-1)/(R+1) - N/R = -(R + N)/(R (R+1)) <= 0.
        - shared, (N, R + 1): R = 0 gives 0 -> 0; else N/(R+1) - N/R = -N/(R (R+1)): <= 0 when N >= 0,
          > 0 when N < 0 (a negative difference shrinks towards 0 as R grows).
        These hold for every sign of N, so for every (y, s) the value is largest at x = all X's only, and
        for that x at y = 0.  With N* = N0 + #X's only and R* = J + #X's only, what is left is
        max over s of f(N*, R* + s): s = 0 when N* >= 0 (f does not grow with R; N* = 0 gives 0
        everywhere), every shared document relevant when N* < 0 (R* >= |N*| > 0, and N*/(R* + s)
        grows with s).  That is the direction's maximum over all assignments: its own upper bound.
        Rprec's cut moves with R, so this does not hold for it (RPrecision has no closed form)."""
        top = instance.grading.max_grade
        ends = {}
        for direction in ("a", "b"):
            sides = binary_sides(self, instance, direction)
            relevant = sides.x_only
            lead = sides.judged_x - sides.judged_y + len(sides.x_only)
            if lead < 0:
                relevant += sides.shared
            count = sides.judged + len(relevant)
            value = 0.0 if count == 0 else lead / count
            assignment = dict.fromkeys(instance.unjudged, 0)
            assignment.update(dict.fromkeys(relevant, top))
            ends[direction] = (value, assignment)
        return ends

    def score(self, ranking, grades, grading) -> float:
        relevant_count = count_relevant(grades, self)
        if relevant_count == 0:
            return 0.0
        counted = self.grades_of(ranking, grades)[: self.cut(relevant_count)]
        is_relevant = table_of(self, "is_relevant")
        return sum(1 for g in counted if is_relevant[g]) / self.divisor(relevant_count)


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
    closed_form_ends = None  # R@k's closed form does not hold: the cut moves with R

    def cut(self, relevant_count: int) -> int:
        return relevant_count if self.cutoff is None else min(self.cutoff, relevant_count)

    def divisor(self, relevant_count: int) -> int:
        return self.cut(relevant_count)
