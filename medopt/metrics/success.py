"""Success@k (HIT@k; trec_eval success.k, ir_measures Success): 1 if a relevant document is in the
top k, else 0."""

from __future__ import annotations

from . import proofs
from .base import Metric, Reduction, binary_sides, register, table_of
from .precision import REL


@register
class Success(Metric):
    family = "Success"
    rational = True
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
        is_relevant = table_of(self, "is_relevant")
        return 1.0 if any(is_relevant[g] for g in self.grades_of(ranking, grades)) else 0.0

    def closed_form_ends(self, instance) -> dict[str, tuple[float, dict]]:
        """Each direction's largest Success(X) - Success(Y) without relevance limits, with a maximising
        assignment (unjudged document -> G or 0): {"a": X = A, "b": X = B}; "b"'s is minus the low end.

        Proof.  Success(L) = 1 iff a relevant document (grade >= rel) is in L's top k.  Only the
        unjudged documents that can be relevant (G >= rel; when G < rel no assignment makes any relevant
        and the sets below are empty) matter.  Let hit_X (hit_Y) say that X's (Y's) top k holds a judged
        relevant document, U_X (U_Y) the unjudged documents of X's (Y's) top k that can be relevant.
        D = Success(X) - Success(Y) lies in {-1, 0, 1}.
        - hit_Y: Success(Y) = 1 under every assignment, so D = Success(X) - 1 <= 0.  D = 0 is reached
          iff X can hit: hit_X, or U_X non-empty (U_X at G).  Otherwise X never hits and D = -1 always.
        - not hit_Y: Success(Y) = 1 iff some document of U_Y is relevant.  D = 1 iff X hits and Y does
          not, i.e. every document of U_Y is non-relevant and X holds a relevant document outside U_Y:
          a judged one (hit_X; everything at 0) or one of U_X - U_Y (X's only unjudged, set at G; the
          rest at 0).  If neither exists, a relevant document of X lies in U_X, a subset of U_Y, so X
          hits only when Y does: D <= 0 under every assignment, and everything at 0 gives D = 0.
        Each value is the direction's maximum over all assignments, so it is its own upper bound."""
        top = instance.grading.max_grade
        ends = {}
        for direction in ("a", "b"):
            sides = binary_sides(self, instance, direction)
            can_hit_x = bool(sides.x_only or sides.shared)
            assignment = dict.fromkeys(instance.unjudged, 0)
            if sides.judged_y:
                value = 0.0 if sides.judged_x or can_hit_x else -1.0
                assignment.update(dict.fromkeys(sides.x_only + sides.shared, top))
            elif sides.judged_x:
                value = 1.0
            elif sides.x_only:
                value = 1.0
                assignment.update(dict.fromkeys(sides.x_only, top))
            else:
                value = 0.0
            ends[direction] = (value, assignment)
        return ends
