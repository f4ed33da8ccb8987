"""MED for Sakai's Q-measure (Q@k, Q without cutoff): profiles (enumerated, or branch and bound over
boxes of profiles) + exact product linearisation.

Definition (SPEC 3, metrics/q.py).  For a ranking X = x_1..x_L (L = k, or the list's
length when shorter or without cutoff), with b_i = [grade(x_i) >= rel], gain u(g),

    Q(X) = (1/R) sum_{i<=L} b_i (beta cg(i) + count(i)) / (beta cg*(i) + i),

cg(i) = sum_{j<=i} u(x_j), count(i) = sum_{j<=i} b_j, R = #documents of the collection
with grade >= rel, cg*(i) the ideal cumulative gain over the collection's positive-gain
documents (constant at its total beyond their number), Q = 0 when R = 0.

Sets.  D unjudged documents of both cut lists (n = |D|), grades 1..G, L = length of the
longer cut list (at most k; only cg*(1..L) is ever used), C_g = #documents of the collection with grade >= g (judged
ones anywhere plus assigned ones; linear in x, modeling.count_at_least).

Profile.  With s_g = u(g) - u(g-1), cg*(i) = sum_g s_g min(i, C_g) for i <= L, and
R = C_rel.  So a profile P fixes C_rel exactly and min(C_g, L) for every other grade
with s_g != 0 (none when beta = 0: Q is then AP-like and only R matters).  Given P,
R and every cg*(i) are constants.  Cases: every profile some assignment can reach.
The unjudged counts U_g = C_g - J_g (J_g judged, fixed) admit an assignment iff
n >= U_1 >= ... >= U_G >= 0; with interval bounds per grade (the profile's, and the
relevance limits of grades 1..G) that is: lo_h <= hi_g for all g <= h.  Unreachable
profiles are skipped here, so the solver never sees an infeasible case except for
limits on grades above G.  R = 0 is one case (C_rel = 0, objective 0).
Number of cases: n+1 when G = 1 or beta = 0 (one per R); for G = 2 at most
(n+1) * (min(n, L)+1) before the reachability test (k = 10, 20 unjudged: 176).

Variables.  x[d,g] (modeling.new_model) and, for documents d, e of D with e above d in A or B,
y[d,e,g] = rel(d) * x[e,g] with rel(d) = sum_{g'>=rel} x[d,g'] binary.  The key is
canonical ((d,e) sorted when rel = g = G, where the product is symmetric), so a pair
ranked the same way in both lists, or any pair when G = 1, has one product variable.

Constraints.  one_grade, relevance limits (modeling.new_model); the profile: C_rel == R,
C_g == c_g (c_g < L) or C_g >= L; y <= rel(d), y <= x[e,g], y >= rel(d) + x[e,g] - 1
(modeling.binary_and: exact for binaries).  All coefficients are integers.

Valid inequalities (tighten the LP relaxation; every integer point of the case keeps
satisfying them, so the optimum is unchanged).  For d in D at rank i of A or B, with
E = the unjudged documents above d there and c_g = the profile's min(C_g, L):
  one-hot pairs   sum_g y[d,e,g] <= rel(d)                        (G > 1; x[e,.] one-hot)
  prefix upper    rel(d) #{top i of grade >= g} <= c_g rel(d)     when c_g < i
  prefix lower    rel(d) #{E + d of grade >= g} >= (c_g - J_g - (n - |E| - 1)) rel(d)
where rel(d) #{..} is linear: sum_{e in E, h >= g} y[d,e,h] + (judged ones) rel(d)
+ sum_{h >= max(g, rel)} x[d,h].  They are RLT products of rel(d) with "at most C_g
documents have grade >= g" and "the U_g >= c_g - J_g such unjudged documents lie in
E, d or the n - |E| - 1 others".  On the hard cases measured they brought the LP bound
down to the optimum (docs/explanation/q-measure.md#q-measure-valid-inequalities).

Objective.  With w(g) = beta u(g) + [g >= rel] and D_i = beta cg*(i) + i (constants),
the term of rank i holding d is b_d (beta cg(i) + count(i)) / D_i, where
b_d * (beta u(e) + b_e) is b_d w(e) = sum_g w(g) y[d,e,g] (both unjudged),
b_d times a constant (e judged), a constant times w(e) (d judged), and for e = d
sum_{g>=rel} w(g) x[d,g] (one-hot).  Objective sign * (Q(A) - Q(B)), sign -1 for
direction 'b': linear, real coefficients only here.

Why exact.  Every assignment satisfies exactly one reachable profile; within it, the
model's objective equals the evaluator's difference (the linearisation is exact on
binaries and the constants are the profile's), so the maximum over cases is MED.
Dinkelbach does not apply directly: cg*(i) sits inside each term's own denominator,
so Q is not one ratio N(x)/D(x) with a single denominator; only fixing the profile
makes every term linear.

Boxes of profiles (strategy "boxes", the default: q_boxes).  A box fixes intervals R in
[R_lo, R_hi] (R_lo >= 1; the profile R = 0, objective 0, is its own case) and min(C_g, L) in
[lo_g, hi_g] for the other profile grades (hi_g = L: C_g >= lo_g only).  Its reachable
profiles are those of `tighten` (the chain n >= U_1 >= ... >= U_G >= 0 and the limits
propagated into the intervals; every value left extends to a chain).  The box's model at a
difference lam: the case model's variables, products and rows, the profile rows replaced by
R_lo <= C_rel <= R_hi and lo_g <= C_g <= hi_g, and the objective
    F(lam) = max  S_X(x; lo) - S_Y(x; hi) - lam C_rel(x),
X the list the direction favours, Y the other, S(x; c) = sum_i term_i(x) / D_i(c) with the
linear numerators term_i = b_i (beta cg(i) + count(i)) of `score` and D_i(c) = beta cg*(i) + i
computed from the counts c (lo: the smallest of the box, hi: the largest).
Why an upper bound.  cg*(i) = sum_g s_g min(i, C_g) is non-decreasing in every C_g (s_g >= 0,
the gain map is non-decreasing), so over the box D_i(lo) <= D_i(P) <= D_i(hi) for the true
profile P of x; every numerator is >= 0 at an integral point, hence
S_X(x; lo) >= R Q(X) and S_Y(x; hi) <= R Q(Y), and for every assignment x of the box
    R(x) (sign (Q(A) - Q(B)) - lam) <= F(lam).
R is kept exact (it multiplies lam instead of dividing the objective): F(lam) <= 0 proves that
no assignment of the box beats lam, and in general every difference in the box is at most
lam + max(F_ub, 0) / R_lo for any proven bound F_ub >= F(lam) (the LP relaxation's optimum,
or a MILP bound).  Dividing by R_lo in X and R_hi in Y instead also bounds the difference, but
that bound stayed far above 1 on wide boxes and pruned nothing
(docs/explanation/q-measure.md#q-measure-boxes-against-profile-enumeration).
Shared ranks.  Rank i's term b_i (beta cg(i) + count(i)) depends only on the document at rank i
and the set of documents above it, so where A and B hold the same document at i under the same set
above (`shared_ranks`: a common prefix, or the ranks below a swap once the sets agree again) the
two terms are equal for every assignment and cancel in Q(A) - Q(B) under every profile.  A box's
objective leaves them out of both sides: still F(lam) >= R (difference - lam) on the box, and no
longer charged D_i(lo) on one side and D_i(hi) on the other for a difference that is always 0.
Valid inequalities over a box.  The one-hot pair rows do not involve the profile.  The prefix
upper row rel(d) #{top i of grade >= g} <= c rel(d) holds for every profile of the box with
c = hi_g (#{top i of grade >= g} <= C_g <= hi_g, and it is only added when hi_g < i, i.e.
when hi_g is a true count below L); the prefix lower row holds with c = lo_g (U_g = C_g - J_g
>= lo_g - J_g whether or not lo_g is capped).  Both are the profile's own rows when lo = hi.
Why a one-profile box is exact.  It is first tested like any box (its relaxation at lam, now with
the profile's own denominators and cuts); when that does not close it, splitting it yields that
profile's case: box_case turns it into the QProfile of cases() (same label, same fields), i.e. today's
case model with D_i(lo) = D_i(hi), R_lo = R_hi = R, the objective divided by R and no lam, solved
with the cutoff; and splitting partitions the reachable profiles, so every profile is closed either
inside a box with F(lam) <= 0 or as its own case.  Testing the one-profile box first trades a few
more box LPs for far fewer case MILPs (measured: docs/explanation/q-measure.md#q-measure-one-profile-boxes).

Size per case: n G binaries x; at most G P binaries y, P <= 2 * C(min(n, L), 2) the
ordered pairs (d, e) with e above d in A or B; 3 P G linking rows, P one-hot pair rows
(G > 1), at most 2 per (d, grade of the profile) prefix rows, n one_grade rows (G > 1),
the profile rows.  k = 10, G = 2, 20 unjudged (disjoint lists): 220 columns, at most 690 rows.

Modules.  This one: the formulation (cases, the profile model, seeds).  q_profiles: the typed
cases (QProfile, QBox), reachability and the tightening of a box.  q_terms: CaseTerms, the
products, valid inequalities and score terms every model is written from.  q_boxes: the box
search (roots, splits, the box model; small boxes settled by evaluation, wide ones split
untested).  q_template: the box and profile models compiled once and patched per box (with the
collection cuts of one-profile cases).  kernels/q_enumeration: every assignment of a small box
scored at once.
"""

from __future__ import annotations

from itertools import product
from math import comb

from medopt.modeling.pyomo_lazy import pyo  # pyomo.environ, loaded on first use

from ..core.instance import judged_count
from ..modeling import count_at_least, direction_sign, new_model
from .base import CaseModels, Formulation, ModelSize, grade_variables, register
from .q_boxes import ProfileBoxes
from .q_profiles import depth, profile_case, profile_grades, reachable, zero_case
from .q_terms import CaseTerms


@register
class QMeasure(Formulation, CaseModels, ProfileBoxes):
    families = ("Q",)
    examples = ("Q@10",)
    title = "Q-measure (profile enumeration or branch-and-bound over profile boxes, linearised products)"

    def strategies(self, instance):
        return ("enumerate", "boxes")

    def quick_bound(self, instance, direction):
        return ProfileBoxes.quick_bound(self, instance, direction)  # not Formulation's "no bound"

    def model_size(self, instance, strategy):
        """The products y[d, e, g] dominate: one per ordered pair of unjudged documents (e above d in a
        list; for the boxes' profile template every pair) and product grade, three rows each; the
        prefix cuts count the products above each rank.  The box templates (both kept by the box
        search) also hold each list's score terms as dense vectors over their columns."""
        unjudged, grades = set(instance.unjudged), instance.max_grade
        n = len(unjudged)
        relevance = max(0, grades - instance.metric.p("rel") + 1)
        listed = sum(comb(sum(1 for d in ranking if d in unjudged), 2) for ranking in (instance.a, instance.b))
        pairs = listed if strategy == "enumerate" else listed + n * (n - 1)
        products = pairs * grades
        cuts = pairs * grades * grades  # at most G profile grades, each cut summing G products per pair
        cut_rows = 4 * (len(instance.a) + len(instance.b) + n) * grades  # upper and lower, per rank or document
        entries = products * (4 + 3 * relevance) + 2 * cuts + cut_rows * (relevance + 1) + 6 * grade_variables(instance)
        # the box template's columns (the listed pairs' products) and the profile template's (every pair's)
        columns = (listed * grades + grade_variables(instance)) + (products + grade_variables(instance))
        dense = (len(instance.a) + len(instance.b)) * columns if strategy == "boxes" else 0
        return ModelSize(entries, "matrix" if strategy == "boxes" else "pyomo", dense,
                         what=f"{products:,} products of unjudged documents and grades")

    def cases(self, instance):
        rel, top, n, cap = instance.metric.p("rel"), instance.max_grade, len(instance.unjudged), depth(instance)
        if rel > top:  # nothing can be relevant: R = 0
            yield zero_case()
            return
        judged = {g: judged_count(instance, g) for g in profile_grades(instance)}
        others = [g for g in judged if g != rel]
        options = []  # per other grade: (value, at_least) pairs
        for g in others:
            exact = [(v, False) for v in range(judged[g], min(judged[g] + n, cap - 1) + 1)]
            options.append(exact + ([(cap, True)] if judged[g] + n >= cap else []))
        for r in range(judged[rel], judged[rel] + n + 1):
            if r == 0:
                if reachable(instance, {rel: (0, 0)}):
                    yield zero_case(((rel, 0, False),))
                continue
            for choice in product(*options):
                counts = ((rel, r, False),) + tuple((g, v, at) for g, (v, at) in zip(others, choice))
                bounds = {g: (v - judged[g], v - judged[g] if not at else n) for g, v, at in counts}
                if reachable(instance, bounds):
                    yield profile_case(r, counts)

    def seeds(self, instance, direction):
        """Prefixes of the better list X's unjudged documents made relevant (all others 0), for two
        orders: those X ranks above the other list Y (or Y lacks), and those Y lacks; at the top grade
        and at the grade rel.  A start, never trusted: the driver re-scores each one.  It reaches the
        trivial bound 1 whenever X's top unjudged document is absent from Y's list and ranked first
        (R = 1, Q(X) = 1, Q(Y) = 0), which leaves nothing to solve.  With a judged relevant document
        R = 1 is out of reach and the seeds saved no solve while costing time: none then (measured:
        docs/explanation/q-measure.md#q-measure-prefix-seeds)."""
        if judged_count(instance, instance.metric.p("rel")) > 0:
            return
        better, other = (instance.a, instance.rank_b) if direction == "a" else (instance.b, instance.rank_a)
        own = instance.rank_a if direction == "a" else instance.rank_b
        far = len(instance.a) + len(instance.b) + 1
        free = [d for d in better if d in instance.unjudged]
        orders = ([d for d in free if own[d] < other.get(d, far)], [d for d in free if d not in other])
        grades = sorted({instance.max_grade, min(instance.metric.p("rel"), instance.max_grade)})
        for order in orders:
            for grade in grades:
                for j in range(1, len(order) + 1):
                    assignment = dict.fromkeys(instance.unjudged, 0)
                    assignment.update(dict.fromkeys(order[:j], grade))
                    yield assignment

    def build_case(self, instance, direction, case):
        """The model of one profile (the module docstring): max sign (Q(A) - Q(B)), exact on the profile."""
        m = new_model(instance, direction, f"Q-measure, profile {case.label}")
        counts = {g: (v, at) for g, v, at in case.counts}
        m.PROFILE = pyo.Set(initialize=sorted(counts), doc="grades whose collection count the case fixes")

        def fix_count(m, g):
            count, (value, at_least) = count_at_least(m, instance, g), counts[g]
            if isinstance(count, int):  # no unjudged document: cases() only yields the judged count
                return pyo.Constraint.Skip
            return count >= value if at_least else count == value

        m.profile = pyo.Constraint(m.PROFILE, rule=fix_count, doc="C_rel = R; C_g = c_g, or C_g >= L when capped")
        r = case.r
        if r == 0:  # both scores are 0 whatever the assignment
            m.objective = pyo.Objective(expr=0 * sum(m.x.values(), 0), sense=pyo.maximize, doc="Q(A) = Q(B) = 0")
            return m
        terms = CaseTerms(m, instance, {g: (depth(instance) if at else v) for g, (v, at) in counts.items()})
        terms.add_products()
        terms.add_valid_inequalities()
        m.score_a = pyo.Expression(expr=terms.score(instance.a) / r, doc="Q(A) given R and cg*: linear in x, y")
        m.score_b = pyo.Expression(expr=terms.score(instance.b) / r, doc="Q(B) given R and cg*: linear in x, y")
        m.objective = pyo.Objective(expr=direction_sign(direction) * (m.score_a - m.score_b), sense=pyo.maximize,
                                    doc="sign * (Q(A) - Q(B))")
        return m
