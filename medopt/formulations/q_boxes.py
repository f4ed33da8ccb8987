"""Branch and bound over boxes of Q-measure profiles: the BoxSearch side of QMeasure (strategy
"boxes", the default; the search itself is exact.boxes.solve_boxes).  The math of a box, its
test model and why it bounds every assignment of the box: q_measure.py.

Small boxes.  A box or case with at most SMALL_BOX assignments (the chains n >= U_1 >= ... >= U_G
>= 0 inside its intervals, C(n, U_1) C(U_1, U_2) ... of them each) is settled without a model: every
assignment is scored (Q.scores_many, the evaluator's sums over a NumPy array of assignments) and the
box's exact maximum is its bound, its best assignment re-scored by the evaluator.  Without judged
relevant documents these are the small R that the R-halving search reaches last (the R = 0 case
included); evaluating such a box costs about as much as one box LP and saves its solves.  Roots and
splits of R cut at the small low part (``small_part``): it is settled by evaluation and the rest has
a larger R_lo to divide its test by.  (Measured: docs/explanation/q-measure.md#q-measure-small-boxes.)  The
assignments of a chain are indexed at once (kernels.q_enumeration) and a box's scores serve both
directions (the instance and its boxes are the same; only the sign differs).  Wide boxes: a box with
R_hi - R_lo > WIDE_BOX R_lo is split without a test (``too_wide``).
The box search solves a few small LPs where profile enumeration solved a MILP per profile
(measured: docs/explanation/q-measure.md#q-measure-boxes-against-profile-enumeration).
The box LPs are patched from one compiled template per instance: q_template.py.
"""

from __future__ import annotations

import math

import numpy as np
from medopt.modeling.pyomo_lazy import pyo  # pyomo.environ, loaded on first use

from ..core.instance import judged_count
from ..kernels import q_enumeration
from ..modeling import count_at_least, new_model
from . import q_quick
from .base import BoxSearch
from .q_profiles import (QBox, box_case, depth, ideal_gains, profile_grades, reachable, shared_ranks, tighten,
                         unjudged_intervals, zero_case)
from .q_roof import BoxForm
from .q_template import BoxModels
from .q_terms import CaseTerms

# a box or case with at most this many assignments is settled by evaluating them all (value:
# docs/explanation/q-measure.md#q-measure-small-boxes)
SMALL_BOX = 3000
# A box with R_hi - R_lo > WIDE_BOX * R_lo is split without testing it (ProfileBoxes.too_wide).  The
# value is the one of those tried with the fewest box solves: docs/explanation/q-measure.md#q-measure-wide-boxes
WIDE_BOX = 1.0


class ProfileBoxes(BoxSearch):
    """Boxes of profiles (QBox) and single profiles (QProfile) for the branch and bound, their models
    (``build_box``, the compiled template ``box_models``) and the small ones settled by evaluation."""

    _last_instance = (None, {})  # (instance, what both its directions share: "template", "small" answers)

    def _shared(self, instance) -> dict:
        """What both directions of ``instance`` share (its BoxModels, small_box answers by case label);
        only the last instance's is kept."""
        seen, shared = self._last_instance
        if seen is not instance:
            shared = {"small": {}}
            self._last_instance = (instance, shared)
        return shared

    def is_box(self, case) -> bool:
        return isinstance(case, QBox)

    def root_boxes(self, instance) -> list:
        """The R = 0 profile (when reachable) and the box of every profile with R >= 1, tightened."""
        rel, top, n, cap = instance.metric.p("rel"), instance.max_grade, len(instance.unjudged), depth(instance)
        if rel > top:
            return [zero_case()]
        judged = {g: judged_count(instance, g) for g in profile_grades(instance)}
        roots = []
        if judged[rel] == 0 and reachable(instance, {rel: (0, 0)}):
            roots.append(zero_case(((rel, 0, False),)))
        box = tight = tighten(instance, tuple(
            (g, max(judged[g], 1), judged[g] + n) if g == rel else (g, min(judged[g], cap), min(judged[g] + n, cap))
            for g in judged))
        if tight is not None:  # cut at once at the small low part of R when there is one (see split)
            small = self.small_part(instance, box)
            roots += [box_case(instance, box, exact=False)] if small is None else self.split_at(instance, box, rel, small)
        return roots

    def box_bound(self, instance, direction, case) -> float:
        """A box's first bound, before any model: the closed form of q_quick (per R, each document bounded
        alone), the largest over the box's R; inf (no claim) for a single profile."""
        if not isinstance(case, QBox):
            return math.inf
        return q_quick.box_bound(self._per_r(instance, direction), *case.r_range)

    def quick_bound(self, instance, direction) -> float:
        """The same closed form over every R (0 when R = 0 is reachable: both scores are 0): what an
        answer stopped before its box search reports instead of the trivial 1 (the driver asks for it
        under a time limit; docs/limits.md#time-limits)."""
        bound = max(self._per_r(instance, direction).values(), default=math.inf)
        return max(bound, 0.0) if judged_count(instance, instance.metric.p("rel")) == 0 else bound

    def _per_r(self, instance, direction) -> dict:
        """q_quick.bounds_by_r of the direction, computed once per instance."""
        shared = self._shared(instance)
        if ("quick", direction) not in shared:
            shared["quick", direction] = q_quick.bounds_by_r(instance, direction)
        return shared["quick", direction]

    def split(self, instance, case) -> list:
        """Two halves of a box along the interval whose width weighs most in the bound
        (R relative to R_lo, count grades by their gain step), each tightened; unreachable ones dropped.
        A box of one profile whose relaxation did not settle it becomes that profile's case."""
        box = case.box
        if all(lo == hi for _, lo, hi in box):
            return [box_case(instance, box)]
        rel, beta, grading = instance.metric.p("rel"), instance.metric.p("beta"), instance.grading
        gain = {g: instance.metric.gain(g, grading) for g in range(0, instance.max_grade + 1)}
        low = {g: lo for g, lo, _ in box}
        ideal = np.array(ideal_gains(instance, gain, low), dtype=float)
        ranks = np.arange(1, len(ideal) + 1)

        def weight(item):  # relative slack of the bound's factors 1/R and 1/D_i that this interval causes
            g, lo, hi = item
            spreads = beta * (gain[g] - gain[g - 1]) * (np.minimum(ranks, hi) - np.minimum(ranks, lo)) / \
                (beta * ideal + ranks)
            spread = float(spreads.max()) if len(spreads) else 0.0
            if g == rel:
                spread += (hi - lo) / lo
            return (hi > lo, spread, hi - lo)

        g, lo, hi = max(box, key=weight)
        middle = (lo + hi) // 2
        if g == rel:  # a small low part, settled by evaluation, instead of a half that is tested and split again
            small = self.small_part(instance, box)
            middle = middle if small is None else small
        return self.split_at(instance, box, g, middle)

    def too_wide(self, instance, case) -> bool:
        """A box whose R interval is wider than WIDE_BOX R_lo: split at once, without testing it (its bound
        divides by R_lo while its relaxation has R up to R_hi, so it stays near the trivial bound; such
        tests settled nothing: docs/explanation/q-measure.md#q-measure-wide-boxes).  Splitting without a test keeps every
        profile in exactly one box, so nothing changes but the work."""
        rel = instance.metric.p("rel")
        lo, hi = next((a, b) for g, a, b in case.box if g == rel)
        return hi - lo > WIDE_BOX * lo

    @staticmethod
    def split_at(instance, box, g, middle) -> list:
        """The parts lo..middle and middle+1..hi of grade g's interval, each tightened (unreachable: dropped)."""
        lo, hi = next((a, b) for h, a, b in box if h == g)
        halves = []
        for part in ((lo, middle), (middle + 1, hi)):
            child = tighten(instance, tuple((h, *part) if h == g else (h, a, b) for h, a, b in box))
            if child is not None:
                halves.append(box_case(instance, child, exact=False))
        return halves

    def small_box(self, instance, direction, case, limit: int | None = None):
        """(the exact maximum, an assignment reaching it) over the assignments of a box or profile
        case, found by evaluating every one of them when there are at most ``limit``;
        (-inf, None) when none meets the profile and the limits; None when there are more.

        The assignments are those with n >= U_1 >= ... >= U_G >= 0 unjudged documents of grade
        >= g, U_g inside the case's intervals (C_g - J_g) and the relevance limits; a chain
        (U_1..U_G) has C(n, U_1) C(U_1, U_2) ... C(U_{G-1}, U_G) of them.  Each is scored by
        Q.scores_many (the evaluator's sums, vectorised), so the maximum is exact: a box closed
        this way needs no model and no split.  With no judged relevant document the small boxes are
        the small R, which a branch and bound on R reaches last and splits most."""
        found = self.chains(instance, case, SMALL_BOX if limit is None else limit)
        if found is None:
            return None
        every, count = found
        if count == 0:
            return -math.inf, None
        answers = self._shared(instance)["small"]
        if case.label not in answers:  # the assignments and scores are the same for both directions
            answers[case.label] = q_enumeration.best_over_chains(instance, every)
        return answers[case.label][direction]

    @staticmethod
    def chains(instance, case, limit):
        """(the chains (U_1..U_G) of the case, their number of assignments) when at most ``limit``, else
        None (also when the case bounds no count): kernels.q_enumeration.chains."""
        intervals = unjudged_intervals(instance, case)
        if intervals is None:
            return None
        return q_enumeration.chains(len(instance.unjudged), instance.max_grade, intervals, limit)

    def small_part(self, instance, box):
        """The largest r < R_hi such that the part R_lo..r of ``box`` is small (SMALL_BOX assignments at
        most), or None: where to cut R so that one part is settled by evaluation and the other,
        its R_lo raised above r, divides its test by a larger R_lo."""
        rel = instance.metric.p("rel")
        lo, hi = next((a, b) for g, a, b in box if g == rel)
        best = None
        for r in range(lo, hi):
            part = tuple((g, a, r) if g == rel else (g, a, b) for g, a, b in box)
            if self.chains(instance, box_case(instance, part, exact=False), SMALL_BOX) is None:
                break
            best = r
        return best

    def box_quadratic(self, instance, direction):
        """The direction's BoxForm (q_roof.py: a box's F(lam) in the variables z[d,g] = [grade(d) >= g]),
        built once per instance and direction; None when there is nothing to decide."""
        if not instance.unjudged or instance.metric.p("rel") > instance.max_grade:
            return None
        shared = self._shared(instance)
        if ("quadratic", direction) not in shared:
            shared["quadratic", direction] = BoxForm(instance, direction)
        return shared["quadratic", direction]

    def box_models(self, instance, direction, cases: bool = False):
        """The direction's compiled template, patched per box or profile (``BoxModels.patched``);
        None when there is nothing to decide or a constant row fails (the models then say so).
        ``cases``: the template for one-profile cases, with the collection cuts, built when the
        first case needs it."""
        from pyomo.common.errors import InfeasibleConstraintException

        if not instance.unjudged or instance.metric.p("rel") > instance.max_grade:
            return None
        shared = self._shared(instance)
        key = ("template", cases)
        if key not in shared:  # the rows do not depend on the direction, only the objective does
            try:
                shared[key] = BoxModels(instance, direction, collection=cases)
            except InfeasibleConstraintException:
                shared[key] = None
        template = shared[key]
        return None if template is None else template.for_direction(direction)

    def build_box(self, instance, direction, case, lam):
        """The test model of a box of profiles at a difference ``lam`` (q_measure's docstring): its optimum
        F(lam) is >= R (difference - lam) for every assignment whose profile lies in the box, so
        F(lam) <= 0 proves that no such assignment beats lam."""
        if lam is None:
            raise TypeError("a box of Q-measure profiles is solved at a difference lam (strategy 'boxes')")
        box, cap, rel = case.box, depth(instance), instance.metric.p("rel")
        m = new_model(instance, direction, f"Q-measure, {case.label}, lam = {lam!r}")
        bounds = {g: (lo, hi) for g, lo, hi in box}
        m.PROFILE = pyo.Set(initialize=sorted(bounds), doc="grades whose collection count the box bounds")

        def bound_count(m, g):
            count, (lo, hi) = count_at_least(m, instance, g), bounds[g]
            if isinstance(count, int):
                return pyo.Constraint.Skip
            if g != rel and hi >= cap:
                return count >= lo
            return pyo.inequality(lo, count, hi)

        m.profile = pyo.Constraint(m.PROFILE, rule=bound_count,
                                   doc="R_lo <= C_rel <= R_hi; lo_g <= C_g <= hi_g (no upper limit when hi_g = L)")
        terms = CaseTerms(m, instance, {g: lo for g, lo, _ in box}, {g: hi for g, _, hi in box})
        terms.add_products()
        terms.add_valid_inequalities()
        better, other = (instance.a, instance.b) if direction == "a" else (instance.b, instance.a)
        shared = shared_ranks(instance)  # equal terms in both lists: they cancel, left out of both
        m.upper_better = pyo.Expression(expr=terms.score(better, terms.ideal_low, shared),
                                        doc="R * Q(better list) or more: cg* at the box's smallest counts, shared ranks left out")
        m.lower_other = pyo.Expression(expr=terms.score(other, terms.ideal_high, shared),
                                       doc="R * Q(other list) or less: cg* at the box's largest counts, shared ranks left out")
        m.objective = pyo.Objective(expr=m.upper_better - m.lower_other - lam * count_at_least(m, instance, rel),
                                    sense=pyo.maximize, doc="F(lam) >= R * (sign * (Q(A) - Q(B)) - lam)")
        return m
