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
ones anywhere plus assigned ones; linear in x, common.count_at_least).

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

Variables.  x[d,g] (common.py) and, for documents d, e of D with e above d in A or B,
y[d,e,g] = rel(d) * x[e,g] with rel(d) = sum_{g'>=rel} x[d,g'] binary.  The key is
canonical ((d,e) sorted when rel = g = G, where the product is symmetric), so a pair
ranked the same way in both lists, or any pair when G = 1, has one product variable.

Constraints.  one_grade, relevance limits (common.py); the profile: C_rel == R,
C_g == c_g (c_g < L) or C_g >= L; y <= rel(d), y <= x[e,g], y >= rel(d) + x[e,g] - 1
(common.binary_and: exact for binaries).  All coefficients are integers.

Valid inequalities (tighten the LP relaxation; every integer point of the case keeps
satisfying them, so the optimum is unchanged).  For d in D at rank i of A or B, with
E = the unjudged documents above d there and c_g = the profile's min(C_g, L):
  one-hot pairs   sum_g y[d,e,g] <= rel(d)                        (G > 1; x[e,.] one-hot)
  prefix upper    rel(d) #{top i of grade >= g} <= c_g rel(d)     when c_g < i
  prefix lower    rel(d) #{E + d of grade >= g} >= (c_g - J_g - (n - |E| - 1)) rel(d)
where rel(d) #{..} is linear: sum_{e in E, h >= g} y[d,e,h] + (judged ones) rel(d)
+ sum_{h >= max(g, rel)} x[d,h].  They are RLT products of rel(d) with "at most C_g
documents have grade >= g" and "the U_g >= c_g - J_g such unjudged documents lie in
E, d or the n - |E| - 1 others".  Measured at k = 10, G = 2, 20 unjudged: the LP
bound of the hard cases fell from 1.29-1.40 to the optimum 1.0, and the whole
enumeration (352 MILPs) went from 73 s (one direction) to 17 s (both) with HiGHS.

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

Boxes of profiles (strategy "boxes", the default; solvers.exact.solve_boxes).  A box fixes
intervals R in [R_lo, R_hi] (R_lo >= 1; the profile R = 0, objective 0, is its own case) and
min(C_g, L) in [lo_g, hi_g] for the other profile grades (hi_g = L: C_g >= lo_g only).  Its
reachable profiles are those of `tighten` (the chain n >= U_1 >= ... >= U_G >= 0 and the limits
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
measured on DL-HARD that bound stayed far above 1 on wide boxes and pruned nothing.
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
profile's case: box_case turns it into the Case of cases() (same label, same fix), i.e. today's
case model with D_i(lo) = D_i(hi), R_lo = R_hi = R, the objective divided by R and no lam, solved
with the cutoff; and splitting partitions the reachable profiles, so every profile is closed either
inside a box with F(lam) <= 0 or as its own case.  Testing the one-profile box first measured
(DL-HARD, Q(beta=1)@20, no judgments, 15 instances): case MILPs 93 -> 28, box LPs 257 -> 332,
total 5.99 -> 4.05 s.
Small boxes.  A box or case with at most SMALL_BOX assignments (the chains n >= U_1 >= ... >= U_G
>= 0 inside its intervals, C(n, U_1) C(U_1, U_2) ... of them each) is settled without a model: every
assignment is scored (Q.scores_many, the evaluator's sums over a NumPy array of assignments) and the
box's exact maximum is its bound, its best assignment re-scored by the evaluator.  Without judged
relevant documents these are the small R that the R-halving search reaches last (the R = 0 case
included).  Measured (DL-HARD, Q(beta=1)@20, no judgments, 50 instances): solves 1,064 -> 902,
median per instance 20 -> 12; evaluating the 1,561 assignments of R <= 3 at n = 21 takes ~2 ms,
about one box LP.  Roots and splits of R cut at the small low part (``small_part``): it is settled
by evaluation and the rest has a larger R_lo to divide its test by (same 50 instances: 902 -> 822
solves; with the DL-HARD qrels 9,203 -> 8,912 solves together with the small boxes).  The assignments
of a chain are indexed at once (``chain_rows``) and a box's scores serve both directions (the
instance and its boxes are the same; only the sign differs).  Wide boxes: a box with R_hi - R_lo >
WIDE_BOX R_lo is split without a test (``too_wide``).
Template.  BoxModels compiles, once per instance (both directions share it), every row any box
or profile can need (the cuts with a placeholder coefficient on rel(d), count rows with free
bounds) and patches the matrix per box: bounds of the count rows, the coefficient c of each cut (or a free row when
the box has no such cut), and the objective from the per-rank term vectors and 1/D_i.  For a
profile the patched matrix is its case model up to free rows (tests compare their optima).  The
template is written with solvers/direct.py's LinearModel, not Pyomo (the same CaseTerms code builds
its rows): DL-HARD Q(beta=1)@20, one template 8.5 ms instead of ~50 ms; a direction's box LPs run in
one HiGHS instance (backends.HighsSession).  50 instances without judgments: 9.4 s -> 5.7 s in all, same
1,064 solves.  Each direction drops the product rows that cannot bind in its objectives
(BoxModels.one_sided: about half the rows; its box LPs ~1/3 faster, the same optima measured).
Collection cuts for one-profile cases.  A second template (``box_models(cases=True)``) adds the
products y[d,e,g] = rel(d) x[e,g] for every ordered pair of unjudged documents (not only e above d
in a list; one per unordered pair when G = 1) and, per document d and profile grade g, the prefix
rows taken over the whole collection (E = every other unjudged document, the judged ones counted
as J_g): rel(d) #{E + d of grade >= g} + J_g rel(d) <= hi_g rel(d) (when hi_g is a true count) and
rel(d) #{E + d of grade >= g} >= (lo_g - J_g) rel(d).  They are the prefix rows with E as large as
it gets, valid for the same reason (RLT products of rel(d) with "C_g <= hi_g" and "U_g >= lo_g -
J_g").  With them the LP relaxation of a profile equalled its MILP optimum on all 488 test profiles
(tests/test_exact_q.py, G = 1..3), on 488 of 490 in a larger graded sample and on every one of
~100 DL-HARD profiles tried (G = 1), so solve_boxes solves a profile's LP first (``exact_lp``) and
settles the profile when the LP optimum does not beat the cutoff or its
rounded point, re-scored, reaches it; otherwise its MILP.  Only for profiles: in every box LP
the extra rows cost more than the tighter bounds save (median 90 ms against 54 ms, no judgments).
Measured (50 instances without judgments, both variants interleaved while a benchmark ran on
both cores): total 8.36 / 8.31 s -> 5.85 / 6.76 s, no MILP left, medians within noise; 15 slow
instances with the qrels (G = 3): 93.6 -> 85.4 s, the same 10,537 solves (their time is in box LPs;
the cuts in every box LP: 247.8 s, 3 of 15 not certified within 30 s).
Measured (DL-HARD, k = 20, Q(beta=1), HiGHS): graded qrels, 4-466 solves of ~1-10 ms instead
of up to 1,781 MILPs per direction; without judgments (G = 1) 7-46 solves instead of n + 1 MILPs.

Size per case: n G binaries x; at most G P binaries y, P <= 2 * C(min(n, L), 2) the
ordered pairs (d, e) with e above d in A or B; 3 P G linking rows, P one-hot pair rows
(G > 1), at most 2 per (d, grade of the profile) prefix rows, n one_grade rows (G > 1),
the profile rows.  k = 10, G = 2, 20 unjudged (disjoint lists): 220 columns, at most 690 rows.
"""

from __future__ import annotations

import copy
import math
from collections import Counter
from dataclasses import replace
from functools import lru_cache
from itertools import combinations, product
from math import comb, prod

import numpy as np
import pyomo.environ as pyo

from ..solvers.backends import HighsSession, MatrixModel
from ..solvers.direct import Linear, LinearModel
from .base import Case, Formulation
from .common import binary_and, count_at_least, direction_sign, judged_count, new_model

AT_LEAST = ">="


def profile_grades(instance) -> list[int]:
    """Grades whose count enters Q: rel (R, exactly) and those with a gain step inside cg*."""
    metric, grading = instance.metric, instance.grading
    rel, beta = metric.p("rel"), metric.p("beta")
    steps = {g: metric.gain(g, grading) - metric.gain(g - 1, grading) for g in range(1, instance.max_grade + 1)}
    return sorted({rel} | ({g for g, s in steps.items() if s != 0} if beta > 0 else set()))


def depth(instance) -> int:
    return max(len(instance.a), len(instance.b))


def reachable(instance, bounds: dict) -> bool:
    """Some n >= U_1 >= ... >= U_G >= 0 with lo_g <= U_g <= hi_g (bounds: g -> (lo, hi))."""
    grades = range(1, instance.max_grade + 1)
    lo = {g: max(0, bounds.get(g, (0, 0))[0]) for g in grades}
    hi = {g: min(len(instance.unjudged), bounds.get(g, (0, len(instance.unjudged)))[1]) for g in grades}
    for limit in instance.limits:
        if limit.grade in lo:
            j = judged_count(instance, limit.grade)
            lo[limit.grade] = max(lo[limit.grade], limit.low - j)
            if limit.high is not None:
                hi[limit.grade] = min(hi[limit.grade], limit.high - j)
    return all(lo[h] <= hi[g] for g in grades for h in grades if g <= h)


@lru_cache(maxsize=512)
def _subsets(pool: int, size: int) -> np.ndarray:
    """The size-subsets of range(pool), one sorted row each (cached: the same sizes recur across boxes)."""
    subsets = list(combinations(range(pool), size))
    subsets = np.array(subsets, dtype=np.int64).reshape(len(subsets), size)
    subsets.flags.writeable = False
    return subsets


class CaseTerms:
    """The pieces of Q under one profile, or over a box of profiles: weights, ideal gains,
    the products y and their inequalities.

    ``low`` and ``high`` map each profile grade to the smallest and largest min(C_g, L) of
    the box (equal for a profile); ``ideal_low`` / ``ideal_high`` are cg*(1..L) at those counts."""

    def __init__(self, m, instance, low, high=None, collection: bool = False):
        high = low if high is None else high
        metric, grading, top = instance.metric, instance.grading, instance.max_grade
        self.m, self.instance = m, instance
        self.rel, self.beta = metric.p("rel"), metric.p("beta")
        gain = {g: metric.gain(g, grading) for g in range(0, top + 1)}
        self.weight = {g: self.beta * gain[g] + (g >= self.rel) for g in range(1, top + 1)}  # w(g)
        self.low, self.high = dict(low), dict(high)  # min(C_g, L) at the box's smallest and largest counts
        self.ideal_low, self.ideal_high = (
            [sum((gain[g] - gain[g - 1]) * min(i, c) for g, c in size.items()) for i in range(1, depth(instance) + 1)]
            for size in (self.low, self.high))  # cg*(i), smallest and largest over the box
        self.sum = Linear.total if isinstance(m, LinearModel) else sum  # one node per sum for a template
        self.relevance = {d: self.sum(m.x[d, g] for g in m.GRADES if g >= self.rel) for d in instance.unjudged}
        self.product_grades = [g for g in m.GRADES if self.weight[g] != 0]
        # ordered pairs (d, e) of unjudged documents with e above d in A or B, each once; with the
        # collection cuts every pair (BoxModels(collection=True))
        self.pairs = list(dict.fromkeys((d, e) for ranking in (instance.a, instance.b)
                                        for i, d in enumerate(ranking) if d in self.relevance
                                        for e in ranking[:i] if e in self.relevance))
        self.collection = collection
        if self.collection:
            ordered = set(self.pairs)
            if top == 1:  # y[d,e] = rel(d) rel(e): one product per unordered pair
                self.pairs += [(d, e) for d, e in combinations(instance.unjudged, 2)
                               if (d, e) not in ordered and (e, d) not in ordered]
            else:
                self.pairs += [(d, e) for d in instance.unjudged for e in instance.unjudged
                               if d != e and (d, e) not in ordered]

    def judged(self, doc) -> bool:
        return doc in self.instance.judgments

    def key(self, d, e, g):
        """Index of rel(d) * x[e,g]: symmetric in d, e when rel(.) is x[., G] and g = G."""
        if g == self.rel == self.instance.max_grade:
            return (d, e, g) if d <= e else (e, d, g)
        return d, e, g

    def add_products(self):
        m = self.m
        products = {self.key(d, e, g): (self.relevance[d], m.x[e, g]) for d, e in self.pairs for g in self.product_grades}
        if products and isinstance(m, LinearModel):  # a box template, built without Pyomo
            m.binary_and("y", products)
        elif products:
            binary_and(m, "y", products, doc="y[d,e,g] = rel(d) * x[e,g]: d relevant and e (above d) of grade g")

    def at_least_above(self, d, above, g):
        """rel(d) * #(documents of `above` with grade >= g), linear in y (g is a profile grade, so w > 0 from g on)."""
        return self.sum(self.m.y[self.key(d, e, h)] for e in above for h in self.m.GRADES if h >= g)

    def judged_at_least_above(self, ranking, i, g) -> int:
        """Judged documents of grade >= g above rank i of ``ranking`` (a constant)."""
        grading, judgments = self.instance.grading, self.instance.judgments
        return sum(1 for e in ranking[: i - 1] if self.judged(e) and grading.cap(judgments[e]) >= g)

    def add_one_hot_pairs(self, constraints) -> None:
        """sum_g y[d,e,g] <= rel(d) (G > 1: x[e,.] is one-hot), added to a ConstraintList."""
        if self.instance.max_grade > 1:
            for d, e in self.pairs:
                constraints.add(self.sum(self.m.y[self.key(d, e, g)] for g in self.product_grades) <= self.relevance[d])

    def self_at_least(self, d, g):
        """rel(d) * [grade(d) >= g] = sum_{h >= max(g, rel)} x[d,h]."""
        return self.sum(self.m.x[d, h] for h in self.m.GRADES if h >= max(g, self.rel))

    def collection_cuts(self):
        """(kind, d, g, others, judged) of the collection cuts (none unless asked for): the prefix cuts
        with every other unjudged document above d and every judged one (J_g of grade >= g); only the
        template (BoxModels) has them."""
        if not self.collection:
            return []
        instance = self.instance
        judged = {g: judged_count(instance, g) for g in self.low}  # a pass over every judgment: once per grade
        cuts = []
        for d in instance.unjudged:
            others = [e for e in instance.unjudged if e != d]
            for g in self.low:
                cuts.append(("upper", d, g, others, judged[g]))
                if others:
                    cuts.append(("lower", d, g, others, judged[g]))
        return cuts

    def add_valid_inequalities(self):
        """Integral cuts that tighten the LP relaxation (see the module docstring); none changes the
        integer optima.  Over a box the upper counts use the largest c_g, the lower ones the smallest."""
        m, instance, n = self.m, self.instance, len(self.instance.unjudged)
        m.cuts = pyo.ConstraintList(doc="valid inequalities: one-hot pairs, prefix upper and lower counts")
        self.add_one_hot_pairs(m.cuts)
        for ranking in (instance.a, instance.b):
            for i, d in enumerate(ranking, start=1):
                if self.judged(d):
                    continue
                above = [e for e in ranking[: i - 1] if not self.judged(e)]
                for g in self.low:
                    high, low = self.high[g], self.low[g]
                    if high < i:  # at most min(i, C_g) <= high documents of grade >= g in the top i
                        judged_above = self.judged_at_least_above(ranking, i, g)
                        m.cuts.add(self.at_least_above(d, above, g) + judged_above * self.relevance[d]
                                   + self.self_at_least(d, g) <= high * self.relevance[d])
                    least = low - judged_count(instance, g) - (n - len(above) - 1)
                    if least > 0 and above:  # U_g >= least + (unjudged docs neither above d nor d)
                        m.cuts.add(self.at_least_above(d, above, g) + self.self_at_least(d, g)
                                   >= least * self.relevance[d])

    def terms(self, ranking):
        """[(i, b_i (beta cg(i) + count(i)))] for the ranks i whose term can be non-zero, linear in x, y."""
        m, instance, weight = self.m, self.instance, self.weight
        metric, grading = instance.metric, instance.grading
        terms, judged_above, above = [], 0.0, []
        for i, d in enumerate(ranking, start=1):
            if self.judged(d):
                grade = instance.judgments[d]
                relevant = metric.is_relevant(grade)
                judged_above += self.beta * metric.gain(grade, grading) + relevant
                if relevant:
                    terms.append((i, judged_above + self.sum(weight[g] * m.x[e, g] for e in above for g in m.GRADES)))
            else:
                term = self.sum(weight[g] * m.x[d, g] for g in m.GRADES if g >= self.rel) + judged_above * self.relevance[d]
                term += self.sum(weight[g] * m.y[self.key(d, e, g)] for e in above for g in self.product_grades)
                terms.append((i, term))
                above.append(d)
        return terms

    def score(self, ranking, ideal=None, skip=frozenset()):
        """R * Q(ranking): sum_i b_i (beta cg(i) + count(i)) / (beta cg*(i) + i), linear in x, y
        (cg* = ``ideal``, by default the smallest of the box: the profile's own for a profile),
        without the ranks in ``skip``."""
        ideal = self.ideal_low if ideal is None else ideal
        total = 0
        for i, term in self.terms(ranking):
            if i not in skip:
                total += term / (self.beta * ideal[i - 1] + i)
        return total


def shared_ranks(instance) -> frozenset:
    """Ranks i (1-based) where A and B hold the same document under the same set of documents above."""
    a, b = instance.a, instance.b
    shared, seen_a, seen_b = set(), set(), set()
    for i in range(min(len(a), len(b))):
        if a[i] == b[i] and seen_a == seen_b:
            shared.add(i + 1)
        seen_a.add(a[i])
        seen_b.add(b[i])
    return frozenset(shared)


def box_label(instance, box) -> str:
    """'R=5..9 C1=5..9 C2=5..>=20 C3>=20': the box's intervals (hi = L of a grade other than rel: C_g >= L)."""
    rel, cap = instance.metric.p("rel"), depth(instance)

    def interval(g, lo, hi):
        at = g != rel and hi >= cap
        if lo == hi:
            return f"C{g}{AT_LEAST if at else '='}{lo}"
        return f"C{g}={lo}..{AT_LEAST if at else ''}{hi}"

    r_lo, r_hi = next((lo, hi) for g, lo, hi in box if g == rel)
    return f"R={r_lo}" + (f"..{r_hi}" if r_hi != r_lo else "") + " " + " ".join(interval(*item) for item in box)


def tighten(instance, box):
    """The smallest box holding every reachable profile of ``box`` (None when it holds none).

    In unjudged counts U_g = C_g - J_g an assignment exists iff n >= U_1 >= ... >= U_G >= 0;
    with interval bounds per grade (the box's, the relevance limits, [0, n] otherwise) the
    chain gives U_g >= lo_h for h > g and U_h <= hi_g for g < h, and then every value left in
    every interval extends to a full chain.  A capped value L of grade g != rel means C_g >= L."""
    rel, cap, n, top = instance.metric.p("rel"), depth(instance), len(instance.unjudged), instance.max_grade
    judged = {g: judged_count(instance, g) for g in range(1, top + 1)}
    lo, hi = {g: 0 for g in range(1, top + 1)}, {g: n for g in range(1, top + 1)}
    for g, low, high in box:
        lo[g] = max(lo[g], low - judged[g])
        if g == rel or high < cap:
            hi[g] = min(hi[g], high - judged[g])
    for limit in instance.limits:
        if limit.grade in lo:
            lo[limit.grade] = max(lo[limit.grade], limit.low - judged[limit.grade])
            if limit.high is not None:
                hi[limit.grade] = min(hi[limit.grade], limit.high - judged[limit.grade])
    for g in range(top - 1, 0, -1):
        lo[g] = max(lo[g], lo[g + 1])
    for g in range(2, top + 1):
        hi[g] = min(hi[g], hi[g - 1])
    if any(lo[g] > hi[g] for g in lo):
        return None
    return tuple((g, judged[g] + lo[g], judged[g] + hi[g]) if g == rel else
                 (g, min(judged[g] + lo[g], cap), min(judged[g] + hi[g], cap)) for g, _, _ in box)


def box_case(instance, box, exact: bool = True) -> Case:
    """A Case for a box; a box of one profile is that profile's case (the same fix, the same model),
    unless ``exact`` is False: then it stays a box, tested by its relaxation before its case is solved."""
    rel, cap = instance.metric.p("rel"), depth(instance)
    r_lo, r_hi = next((lo, hi) for g, lo, hi in box if g == rel)
    if exact and all(lo == hi for _, lo, hi in box):
        counts = tuple((g, lo, g != rel and lo >= cap) for g, lo, _ in box)
        counts = (next(c for c in counts if c[0] == rel),) + tuple(c for c in counts if c[0] != rel)
        label = " ".join(f"C{g}{AT_LEAST if at else '='}{v}" for g, v, at in sorted(counts))
        return Case(f"R={r_lo} {label}", float(r_lo), {"R": r_lo, "counts": counts})
    return Case(f"box {box_label(instance, box)}", float(r_lo), {"R": (r_lo, r_hi), "box": tuple(box)})


SMALL_BOX = 3000  # a box or case with at most this many assignments is settled by evaluating them all
# A box with R_hi - R_lo > WIDE_BOX * R_lo is split without testing it (QMeasure.too_wide).  Measured
# (DL-HARD, Q(beta=1)@20, no judgments, 100 instances, HiGHS): no rule 2,185 box solves, median 75 ms;
# 3: 1,951; 2: 1,867; 1: 1,791 and 63 ms; 0.5: 1,841 and 84 ms; 0.3: 2,039.
WIDE_BOX = 1.0
PLACEHOLDER = 0.5  # coefficient of rel(d) in the template's count cuts: never cancels an integer, patched per box


class BoxModels:
    """One direction's box models as one compiled matrix, patched per box (strategy 'boxes').

    The rows are built once for both directions (only the objective differs); each direction then
    drops the product rows its objectives cannot make bind and has its own HiGHS session
    (``for_direction``).
    The template holds every row a box or profile model of this direction can need: the shared
    rows (one_grade, limits, dominance, products, one-hot pairs), C_g >= . and C_g <= . per
    profile grade, and each prefix cut that some box can activate, written with the placeholder
    coefficient on rel(d).  For a box the patch sets the count rows' bounds, the coefficient
    c_g of rel(d) in each cut (the box's largest c_g in an upper cut, its smallest in a lower
    one, as in CaseTerms.add_valid_inequalities), frees the rows of cuts the box does not have
    (+-inf bound), and sets the objective from the per-rank term vectors and the box's
    denominators.  The patched matrix is therefore the compiled form of ``build`` for that case
    or box, up to free rows and a ranged count row written as two rows
    (tests/test_exact_q.py compares their optima)."""

    def __init__(self, instance, direction, collection: bool = False):
        self.instance, self.direction = instance, direction
        rel, cap, n = instance.metric.p("rel"), depth(instance), len(instance.unjudged)
        self.rel, self.cap, self.n = rel, cap, n
        self.grades = profile_grades(instance)
        self.judged = {g: judged_count(instance, g) for g in self.grades}
        m = self.m = LinearModel(instance)  # x, one_grade, limits, dominance: new_model's rows
        terms = CaseTerms(m, instance, {g: 0 for g in self.grades}, collection=collection)
        self.exact_lp = terms.collection  # a profile's LP relaxation is its MILP optimum, in every case tried
        counts = {g: m.count_at_least(g) for g in self.grades}
        self.count_rows = {g: (m.add(counts[g] >= -1), m.add(counts[g] <= n + 1)) for g in self.grades}
        terms.add_products()
        terms.add_one_hot_pairs(m)
        cuts = []  # (kind, row, i, g, d, above)
        smallest = {g: (max(self.judged[g], 1) if g == rel else min(self.judged[g], cap)) for g in self.grades}
        for ranking in (instance.a, instance.b):
            for i, d in enumerate(ranking, start=1):
                if terms.judged(d):
                    continue
                above = [e for e in ranking[: i - 1] if not terms.judged(e)]
                for g in self.grades:
                    if smallest[g] < i:
                        judged_above = terms.judged_at_least_above(ranking, i, g)
                        row = m.add(terms.at_least_above(d, above, g) + judged_above * terms.relevance[d]
                                    + terms.self_at_least(d, g) - PLACEHOLDER * terms.relevance[d] <= 0)
                        cuts.append(("upper", row, i, g, d, len(above)))
                    if above:
                        row = m.add(terms.at_least_above(d, above, g) + terms.self_at_least(d, g)
                                    - PLACEHOLDER * terms.relevance[d] >= 0)
                        cuts.append(("lower", row, i, g, d, len(above)))
        for kind, d, g, others, judged in terms.collection_cuts():  # as prefix cuts over the whole collection
            if kind == "upper" and (g == rel or smallest[g] < cap):
                row = m.add(terms.at_least_above(d, others, g) + judged * terms.relevance[d]
                            + terms.self_at_least(d, g) - PLACEHOLDER * terms.relevance[d] <= 0)
                # active while hi_g is a true count: always for rel (its rank above every count), else hi_g < L
                cuts.append(("upper", row, judged + n + 1 if g == rel else cap, g, d, len(others)))
            elif kind == "lower":
                row = m.add(terms.at_least_above(d, others, g) + terms.self_at_least(d, g)
                            - PLACEHOLDER * terms.relevance[d] >= 0)
                cuts.append(("lower", row, cap, g, d, len(others)))
        self.matrix = m.matrix()
        A = self.matrix.A
        # per cut (arrays, one entry a cut): upper or lower, its row, rank i, grade index, |E|; and the
        # positions in A.data of the coefficients of rel(d) = sum_{h >= rel} x[d,h], with their cut
        self.cut_upper = np.array([kind == "upper" for kind, *_ in cuts], dtype=bool)
        self.cut_row, self.cut_rank, self.cut_grade, self.cut_above = (
            np.array([cut[k] for cut in cuts], dtype=int).reshape(-1) for k in (1, 2, 3, 5))
        self.cut_grade = np.searchsorted(self.grades, self.cut_grade)
        positions, owners = [], []
        for c, (_, r, _, _, d, _) in enumerate(cuts):
            start, end = A.indptr[r], A.indptr[r + 1]
            wanted = {m.x[d, h].parts[0][1] for h in m.GRADES if h >= rel}
            found = [start + k for k, j in enumerate(A.indices[start:end]) if j in wanted]
            positions += found
            owners += [c] * len(found)
        self.cut_positions, self.cut_of_position = np.array(positions, dtype=int), np.array(owners, dtype=int)
        # per side: the term ranks, their vectors (one row a term) and constants
        self.vectors = {}
        for side, ranking in (("a", instance.a), ("b", instance.b)):
            entries = [(i, *m.vector(t)) for i, t in terms.terms(ranking)]
            self.vectors[side] = (np.array([e[0] for e in entries], dtype=int),
                                  np.array([e[1] for e in entries]).reshape(len(entries), len(m.labels)),
                                  np.array([e[2] for e in entries], dtype=float))
        self.relevant, _ = m.vector(counts[rel])  # C_rel = J_rel + this . x
        self.relevant_constant = float(self.judged[rel])
        gain = {g: instance.metric.gain(g, instance.grading) for g in range(0, instance.max_grade + 1)}
        self.steps = {g: gain[g] - gain[g - 1] for g in self.grades}
        self.beta = instance.metric.p("beta")
        self.base_data = A.data.copy()
        self.shared = shared_ranks(instance)
        self.skipped = {}  # (side, ranks to skip) -> mask over the side's ranks (score_vector)
        self.and_rows = m.and_rows
        self.directions = {}

    def for_direction(self, direction) -> "BoxModels":
        """This template for one direction: its own objective, and without the product rows that
        cannot bind in it (``one_sided``), in a HiGHS session of its own.  Built once per direction."""
        if direction not in self.directions:
            other = copy.copy(self)
            other.direction = direction
            other.drop_rows(self.one_sided(direction))
            other.session = HighsSession()
            self.directions[direction] = other
        return self.directions[direction]

    def one_sided(self, direction) -> np.ndarray:
        """The product rows a model of ``direction`` can do without (row indices).

        A product y = u v whose column has a coefficient >= 0 in every box and profile objective of
        the direction (it appears only in the better list's terms) needs only y <= u and y <= v; one
        with a coefficient <= 0 everywhere (only in the other list's terms) only y >= u + v - 1
        (and y >= 0).  Why exact.  Dropping rows relaxes a model, so a box's relaxation still bounds
        it from above; and at any integer x, (x, u v) satisfies every remaining row (all rows hold at
        true products), while any feasible y gives objective coefficient * y <= coefficient * u v
        (y <= min(u, v) = u v, resp. y >= u + v - 1 = u v, at binaries), so a profile's maximum over
        the smaller model is still its true maximum; its solutions are re-scored by the evaluator
        anyway.  A product in both lists' terms (a pair ordered the same way in both, one variable)
        keeps all three rows.  Measured (DL-HARD, Q(beta=1)@20, no judgments): about 450 of 984 rows
        dropped, the same LP optima, 62 -> 42 ms for 24 box LPs."""
        better, other = ("a", "b") if direction == "a" else ("b", "a")
        used = {side: np.abs(self.vectors[side][1]).sum(axis=0) > 0 for side in ("a", "b")}
        drop = []
        for j, first in self.and_rows:
            if used[better][j] and not used[other][j]:
                drop.append(first + 2)  # y >= u + v - 1
            elif used[other][j] and not used[better][j]:
                drop += [first, first + 1]  # y <= u, y <= v
        return np.array(drop, dtype=int)

    def drop_rows(self, drop) -> None:
        """Remove rows ``drop`` (product rows: no count row or cut among them) from this copy's matrix,
        renumbering the rows and matrix positions the patch uses."""
        base = self.matrix
        keep = np.ones(base.A.shape[0], dtype=bool)
        keep[drop] = False
        lengths = np.diff(base.A.indptr)
        kept_positions = np.repeat(keep, lengths)
        new_row = np.cumsum(keep) - 1
        new_position = np.cumsum(kept_positions) - 1
        self.matrix = replace(base, A=base.A[keep], row_lower=base.row_lower[keep], row_upper=base.row_upper[keep])
        self.count_rows = {g: (int(new_row[a]), int(new_row[b])) for g, (a, b) in self.count_rows.items()}
        self.cut_row = new_row[self.cut_row]
        self.cut_positions = new_position[self.cut_positions]
        self.base_data = self.base_data[kept_positions]

    def assignment(self, x) -> dict:
        return self.m.assignment(x)

    def score_vector(self, side, sizes, skip=frozenset()):
        """R * Q(side) as (vector, constant) with cg* at the counts ``sizes``, without the ranks in ``skip``."""
        ranks, vectors, constants = self.vectors[side]
        ideal = sum(step * np.minimum(ranks, sizes[g]) for g, step in self.steps.items() if step)
        weights = 1.0 / (self.beta * ideal + ranks)
        if skip:
            key = (side, skip)
            if key not in self.skipped:  # the same few rank sets recur for every box
                self.skipped[key] = np.isin(ranks, list(skip))
            weights[self.skipped[key]] = 0.0
        return weights @ vectors, float(weights @ constants)

    def patched(self, case, lam=None):
        """The matrix of ``case`` (a profile with R >= 1, or a box at ``lam``); None for the R = 0 case."""
        if "box" in case.fix:
            box = case.fix["box"]
        elif case.fix["R"] == 0 or not self.matrix.columns:
            return None
        else:
            box = tuple((g, v, v) for g, v, _ in case.fix["counts"])
        low, high = {g: lo for g, lo, _ in box}, {g: hi for g, _, hi in box}
        base = self.matrix
        row_lower, row_upper = base.row_lower.copy(), base.row_upper.copy()
        for g, (r_low, r_high) in self.count_rows.items():
            row_lower[r_low] = low[g] - self.judged[g]
            row_upper[r_high] = (high[g] - self.judged[g]) if (g == self.rel or high[g] < self.cap) else np.inf
        # upper cuts: c = hi_g, active when hi_g < i; lower: c = lo_g - J_g - (n - |E| - 1), active when > 0
        highs = np.array([high[g] for g in self.grades])[self.cut_grade]
        least = (np.array([low[g] - self.judged[g] for g in self.grades])[self.cut_grade]
                 - (self.n - self.cut_above - 1))
        size = np.where(self.cut_upper, highs, least)
        data = self.base_data.copy()
        data[self.cut_positions] += (PLACEHOLDER - size)[self.cut_of_position]  # integral either way (CP-SAT)
        row_upper[self.cut_row[self.cut_upper & (highs >= self.cut_rank)]] = np.inf  # a freed row binds nothing
        row_lower[self.cut_row[~self.cut_upper & (least <= 0)]] = -np.inf
        A = copy.copy(base.A)  # shares the template's index arrays (never written), without scipy's
        A.data = data          # constructor checks (~0.2 ms a box, more than a small box LP's solve)
        better, other = ("a", "b") if self.direction == "a" else ("b", "a")
        skip = self.shared if "box" in case.fix else frozenset()  # a profile's objective stays the case's
        x_vector, x_constant = self.score_vector(better, low, skip)
        y_vector, y_constant = self.score_vector(other, high, skip)
        if "box" in case.fix:
            c = x_vector - y_vector - lam * self.relevant
            offset = x_constant - y_constant - lam * self.relevant_constant
        else:
            r = case.fix["R"]
            c, offset = (x_vector - y_vector) / r, (x_constant - y_constant) / r
        return MatrixModel(c, offset, A, row_lower, row_upper, base.lower, base.upper, base.integer, base.columns)


class QMeasure(Formulation):
    family_name = "Q-measure (profile enumeration or branch-and-bound over profile boxes, linearised products)"
    ratio = True
    strategies = ("enumerate", "boxes")
    _last_instance = (None, {})  # (instance, what both its directions share: "template", "small" answers)

    def _shared(self, instance) -> dict:
        """What both directions of ``instance`` share (its BoxModels, small_box answers by case label);
        only the last instance's is kept."""
        seen, shared = self._last_instance
        if seen is not instance:
            shared = {"small": {}}
            self._last_instance = (instance, shared)
        return shared

    def cases(self, instance):
        rel, top, n, cap = instance.metric.p("rel"), instance.max_grade, len(instance.unjudged), depth(instance)
        if rel > top:  # nothing can be relevant: R = 0
            yield Case("R=0", 1.0, {"R": 0, "counts": ()})
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
                    yield Case("R=0", 1.0, {"R": 0, "counts": ((rel, 0, False),)})
                continue
            for choice in product(*options):
                counts = ((rel, r, False),) + tuple((g, v, at) for g, (v, at) in zip(others, choice))
                bounds = {g: (v - judged[g], v - judged[g] if not at else n) for g, v, at in counts}
                if reachable(instance, bounds):
                    label = " ".join(f"C{g}{AT_LEAST if at else '='}{v}" for g, v, at in sorted(counts))
                    yield Case(f"R={r} {label}", float(r), {"R": r, "counts": counts})

    def seeds(self, instance, direction):
        """Prefixes of the better list X's unjudged documents made relevant (all others 0), for two
        orders: those X ranks above the other list Y (or Y lacks), and those Y lacks; at the top grade
        and at the grade rel.  A start, never trusted: the driver re-scores each one.  It reaches the
        trivial bound 1 whenever X's top unjudged document is absent from Y's list and ranked first
        (R = 1, Q(X) = 1, Q(Y) = 0), which leaves nothing to solve.  Measured (DL-HARD, Q(beta=1)@20,
        no judgments, 15 instances): 2-15 ms, 6 instances reached 1.0, box solves 543 -> 402.  With a
        judged relevant document R = 1 is out of reach and, measured with the DL-HARD qrels (Q@20, 50
        instances), the seeds changed no solve count (9,792) and cost 12 ms median: none then."""
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

    # -- branch and bound over boxes of profiles (strategy "boxes", solvers.exact.solve_boxes) --------
    def root_boxes(self, instance) -> list[Case]:
        """The R = 0 profile (when reachable) and the box of every profile with R >= 1, tightened."""
        rel, top, n, cap = instance.metric.p("rel"), instance.max_grade, len(instance.unjudged), depth(instance)
        if rel > top:
            return [Case("R=0", 1.0, {"R": 0, "counts": ()})]
        judged = {g: judged_count(instance, g) for g in profile_grades(instance)}
        roots = []
        if judged[rel] == 0 and reachable(instance, {rel: (0, 0)}):
            roots.append(Case("R=0", 1.0, {"R": 0, "counts": ((rel, 0, False),)}))
        box = tight = tighten(instance, tuple(
            (g, max(judged[g], 1), judged[g] + n) if g == rel else (g, min(judged[g], cap), min(judged[g] + n, cap))
            for g in judged))
        if tight is not None:  # cut at once at the small low part of R when there is one (see split)
            small = self.small_part(instance, box)
            roots += [box_case(instance, box, exact=False)] if small is None else self.split_at(instance, box, rel, small)
        return roots

    def split(self, instance, case, solution=None) -> list[Case]:
        """Two halves of a box along the interval whose width weighs most in the bound
        (R relative to R_lo, count grades by their gain step), each tightened; unreachable ones dropped.
        A box of one profile whose relaxation did not settle it becomes that profile's case."""
        box = case.fix["box"]
        if all(lo == hi for _, lo, hi in box):
            return [box_case(instance, box)]
        rel, beta, grading = instance.metric.p("rel"), instance.metric.p("beta"), instance.grading
        gain = {g: instance.metric.gain(g, grading) for g in range(0, instance.max_grade + 1)}
        low = {g: lo for g, lo, _ in box}
        ideal = [sum((gain[g] - gain[g - 1]) * min(i, c) for g, c in low.items()) for i in range(1, depth(instance) + 1)]

        def weight(item):  # relative slack of the bound's factors 1/R and 1/D_i that this interval causes
            g, lo, hi = item
            spread = max((beta * (gain[g] - gain[g - 1]) * (min(i, hi) - min(i, lo)) / (beta * ideal[i - 1] + i)
                          for i in range(1, len(ideal) + 1)), default=0.0)
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
        divides by R_lo while its relaxation has R up to R_hi, so it stays near the trivial bound; measured
        on DL-HARD, Q(beta=1)@20 without judgments the roots' tests returned bound 1.0 for R = 3..27,
        4..27 and 4..15 and settled nothing).  Splitting without a test keeps every profile in exactly
        one box, so nothing changes but the work."""
        rel = instance.metric.p("rel")
        lo, hi = next((a, b) for g, a, b in case.fix["box"] if g == rel)
        return hi - lo > WIDE_BOX * lo

    @staticmethod
    def split_at(instance, box, g, middle) -> list[Case]:
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
        n, limit = len(instance.unjudged), SMALL_BOX if limit is None else limit
        found = self.chains(instance, case, limit)
        if found is None:
            return None
        chains, count = found
        if count == 0:
            return -math.inf, None
        answers = self._shared(instance)["small"]
        if case.label not in answers:  # the assignments and scores are the same for both directions
            rows = np.concatenate([self.chain_rows(n, chain) for chain in chains])
            answers[case.label] = self._best(instance, rows)
        return answers[case.label][direction]

    def chains(self, instance, case, limit):
        """(the chains (U_1..U_G) of the case, their number of assignments) when at most ``limit``, else
        None (also when the case bounds no count)."""
        n, top = len(instance.unjudged), instance.max_grade
        intervals = self.unjudged_intervals(instance, case)
        if intervals is None:
            return None
        chains, count = [], 0

        def extend(chain):
            nonlocal count
            g = len(chain) + 1
            if g > top:
                chains.append(chain)
                count += prod(comb(a, b) for a, b in zip((n,) + chain, chain))
                return
            low, high = intervals[g]
            for u in range(max(low, 0), min(high, chain[-1] if chain else n) + 1):
                extend(chain + (u,))
                if count > limit:
                    return

        extend(())
        return None if count > limit else (chains, count)

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

    @staticmethod
    def chain_rows(n, chain) -> np.ndarray:
        """Every assignment of n documents with exactly chain[g - 1] documents of grade >= g (one row
        each, grades 0..G): the documents of grade >= g are a subset of those of grade >= g - 1, so
        row (i_1, ..., i_G) takes subset i_1 of all n documents, subset i_2 of that one, and so on,
        indexed at once with NumPy (C(n, U_1) C(U_1, U_2) ... rows)."""
        index = [np.arange(n)[None, :]]  # per level: the documents of grade >= g of each row so far
        for size in chain:
            pool = index[-1].shape[1]
            subsets = _subsets(pool, size)
            previous = index[-1]
            rows = np.repeat(np.arange(len(previous)), len(subsets))
            picks = np.tile(subsets, (len(previous), 1))
            index = [level[rows] for level in index] + [np.take_along_axis(previous[rows], picks, axis=1)]
        grades = np.zeros((len(index[-1]), n), dtype=np.int64)
        for level in index[1:]:  # a document's grade: the number of levels holding it (distinct within a row)
            grades[np.arange(len(level))[:, None], level] += 1
        return grades

    @staticmethod
    def _best(instance, rows):
        """direction -> (max difference, its assignment) over the assignment rows that meet the limits."""
        metric, grading = instance.metric, instance.grading
        column = {d: j for j, d in enumerate(instance.unjudged)}
        judged = Counter(instance.judgments.values())
        counts = {g: np.full(len(rows), c) for g, c in judged.items()}
        for g in range(1, instance.max_grade + 1):
            counts[g] = counts.get(g, 0) + (rows == g).sum(axis=1)

        def grades_of(ranking):
            out = np.empty((len(rows), len(ranking)), dtype=np.int64)
            for i, d in enumerate(ranking):
                out[:, i] = rows[:, column[d]] if d in column else instance.judgments[d]
            return out

        score_a = metric.scores_many(grades_of(instance.a), counts, grading) if instance.a else np.zeros(len(rows))
        score_b = metric.scores_many(grades_of(instance.b), counts, grading) if instance.b else np.zeros(len(rows))
        outside = np.zeros(len(rows), dtype=bool)
        for limit in instance.limits:
            at_least = sum((c for g, c in counts.items() if g >= limit.grade), np.zeros(len(rows)))
            outside |= (at_least < limit.low) | ((at_least > limit.high) if limit.high is not None else False)
        answers = {}
        for direction in ("a", "b"):
            difference = np.where(outside, -np.inf, direction_sign(direction) * (score_a - score_b))
            best = int(np.argmax(difference))
            answers[direction] = (-math.inf, None) if not np.isfinite(difference[best]) else \
                (float(difference[best]), {d: int(rows[best, j]) for d, j in column.items()})
        return answers

    def unjudged_intervals(self, instance, case):
        """grade g -> (lo, hi) for U_g, the unjudged documents of grade >= g, in a box or profile case
        (None when the case bounds nothing, as when no grade can be relevant)."""
        rel, top, cap, n = instance.metric.p("rel"), instance.max_grade, depth(instance), len(instance.unjudged)
        if "box" in case.fix:
            bounds = {g: (lo, hi if (g == rel or hi < cap) else math.inf) for g, lo, hi in case.fix["box"]}
        elif case.fix.get("counts"):
            bounds = {g: (v, math.inf if at else v) for g, v, at in case.fix["counts"]}
        else:
            return None
        intervals = {g: (0, n) for g in range(1, top + 1)}
        for g, (lo, hi) in bounds.items():
            if g in intervals:
                j = judged_count(instance, g)
                intervals[g] = (max(0, lo - j), int(min(n, hi - j)))
        return intervals

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

    def build(self, instance, direction, *, case=None, lam=None):
        if case is None:
            raise TypeError("the Q-measure model needs a profile case (strategy 'enumerate') or a box (strategy 'boxes')")
        if "box" in case.fix:
            return self.build_box(instance, direction, case, lam)
        m = new_model(instance, direction, f"Q-measure, profile {case.label}")
        counts = {g: (v, at) for g, v, at in case.fix["counts"]}
        m.PROFILE = pyo.Set(initialize=sorted(counts), doc="grades whose collection count the case fixes")

        def fix_count(m, g):
            count, (value, at_least) = count_at_least(m, instance, g), counts[g]
            if isinstance(count, int):  # no unjudged document: cases() only yields the judged count
                return pyo.Constraint.Skip
            return count >= value if at_least else count == value

        m.profile = pyo.Constraint(m.PROFILE, rule=fix_count, doc="C_rel = R; C_g = c_g, or C_g >= L when capped")
        r = case.fix["R"]
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

    def build_box(self, instance, direction, case, lam):
        """The test model of a box of profiles at a difference ``lam`` (module docstring): its optimum
        F(lam) is >= R (difference - lam) for every assignment whose profile lies in the box, so
        F(lam) <= 0 proves that no such assignment beats lam."""
        if lam is None:
            raise TypeError("a box of Q-measure profiles is solved at a difference lam (strategy 'boxes')")
        box, cap, rel = case.fix["box"], depth(instance), instance.metric.p("rel")
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


FORMULATION = QMeasure()
