"""MED for Sakai's Q-measure (Q@k, Q without cutoff): profile enumeration + exact product linearisation.

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

Size per case: n G binaries x; at most G P binaries y, P <= 2 * C(min(n, L), 2) the
ordered pairs (d, e) with e above d in A or B; 3 P G linking rows, P one-hot pair rows
(G > 1), at most 2 per (d, grade of the profile) prefix rows, n one_grade rows (G > 1),
the profile rows.  k = 10, G = 2, 20 unjudged (disjoint lists): 220 columns, at most 690 rows.
"""

from __future__ import annotations

from itertools import product

import pyomo.environ as pyo

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


class CaseTerms:
    """The pieces of Q under one profile: weights, ideal gains, the products y and their inequalities."""

    def __init__(self, m, instance, counts):
        metric, grading, top = instance.metric, instance.grading, instance.max_grade
        self.m, self.instance = m, instance
        self.rel, self.beta = metric.p("rel"), metric.p("beta")
        gain = {g: metric.gain(g, grading) for g in range(0, top + 1)}
        self.weight = {g: self.beta * gain[g] + (g >= self.rel) for g in range(1, top + 1)}  # w(g)
        self.size = {g: (depth(instance) if at_least else v) for g, (v, at_least) in counts.items()}  # min(C_g, L)
        self.ideal = [sum((gain[g] - gain[g - 1]) * min(i, c) for g, c in self.size.items())
                      for i in range(1, depth(instance) + 1)]  # cg*(i)
        self.relevance = {d: sum(m.x[d, g] for g in m.GRADES if g >= self.rel) for d in instance.unjudged}
        self.product_grades = [g for g in m.GRADES if self.weight[g] != 0]
        # ordered pairs (d, e) of unjudged documents with e above d in A or B, each once
        self.pairs = list(dict.fromkeys((d, e) for ranking in (instance.a, instance.b)
                                        for i, d in enumerate(ranking) if d in self.relevance
                                        for e in ranking[:i] if e in self.relevance))

    def judged(self, doc) -> bool:
        return doc in self.instance.judgments

    def key(self, d, e, g):
        """Index of rel(d) * x[e,g]: symmetric in d, e when rel(.) is x[., G] and g = G."""
        return tuple(sorted((d, e))) + (g,) if self.rel == self.instance.max_grade == g else (d, e, g)

    def add_products(self):
        m = self.m
        products = {self.key(d, e, g): (self.relevance[d], m.x[e, g]) for d, e in self.pairs for g in self.product_grades}
        if products:
            binary_and(m, "y", products, doc="y[d,e,g] = rel(d) * x[e,g]: d relevant and e (above d) of grade g")

    def at_least_above(self, d, above, g):
        """rel(d) * #(documents of `above` with grade >= g), linear in y (g is a profile grade, so w > 0 from g on)."""
        return sum(self.m.y[self.key(d, e, h)] for e in above for h in self.m.GRADES if h >= g)

    def self_at_least(self, d, g):
        """rel(d) * [grade(d) >= g] = sum_{h >= max(g, rel)} x[d,h]."""
        return sum(self.m.x[d, h] for h in self.m.GRADES if h >= max(g, self.rel))

    def add_valid_inequalities(self):
        """Integral cuts that tighten the LP relaxation (see the module docstring); none changes the integer optima."""
        m, instance, n = self.m, self.instance, len(self.instance.unjudged)
        m.cuts = pyo.ConstraintList(doc="valid inequalities: one-hot pairs, prefix upper and lower counts")
        if instance.max_grade > 1:
            for d, e in self.pairs:
                m.cuts.add(sum(m.y[self.key(d, e, g)] for g in self.product_grades) <= self.relevance[d])
        for ranking in (instance.a, instance.b):
            for i, d in enumerate(ranking, start=1):
                if self.judged(d):
                    continue
                above = [e for e in ranking[: i - 1] if not self.judged(e)]
                for g, size in self.size.items():
                    if size < i:  # at most min(i, C_g) documents of grade >= g in the top i
                        judged_above = sum(1 for e in ranking[: i - 1]
                                           if self.judged(e) and instance.grading.cap(instance.judgments[e]) >= g)
                        m.cuts.add(self.at_least_above(d, above, g) + judged_above * self.relevance[d]
                                   + self.self_at_least(d, g) <= size * self.relevance[d])
                    least = size - judged_count(instance, g) - (n - len(above) - 1)
                    if least > 0 and above:  # U_g >= least + (unjudged docs neither above d nor d)
                        m.cuts.add(self.at_least_above(d, above, g) + self.self_at_least(d, g)
                                   >= least * self.relevance[d])

    def score(self, ranking):
        """R * Q(ranking): sum_i b_i (beta cg(i) + count(i)) / (beta cg*(i) + i), linear in x, y."""
        m, instance, weight = self.m, self.instance, self.weight
        metric, grading = instance.metric, instance.grading
        total, judged_above, above = 0, 0.0, []
        for i, d in enumerate(ranking, start=1):
            denominator = self.beta * self.ideal[i - 1] + i
            if self.judged(d):
                grade = instance.judgments[d]
                relevant = metric.is_relevant(grade)
                judged_above += self.beta * metric.gain(grade, grading) + relevant
                if relevant:
                    total += (judged_above + sum(weight[g] * m.x[e, g] for e in above for g in m.GRADES)) / denominator
            else:
                term = sum(weight[g] * m.x[d, g] for g in m.GRADES if g >= self.rel) + judged_above * self.relevance[d]
                term += sum(weight[g] * m.y[self.key(d, e, g)] for e in above for g in self.product_grades)
                total += term / denominator
                above.append(d)
        return total


class QMeasure(Formulation):
    family_name = "Q-measure (profile enumeration, linearised products)"
    ratio = True
    strategies = ("enumerate",)

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

    def build(self, instance, direction, *, case=None, lam=None):
        if case is None:
            raise TypeError("the Q-measure model needs a profile case (strategy 'enumerate')")
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
        terms = CaseTerms(m, instance, counts)
        terms.add_products()
        terms.add_valid_inequalities()
        m.score_a = pyo.Expression(expr=terms.score(instance.a) / r, doc="Q(A) given R and cg*: linear in x, y")
        m.score_b = pyo.Expression(expr=terms.score(instance.b) / r, doc="Q(B) given R and cg*: linear in x, y")
        m.objective = pyo.Objective(expr=direction_sign(direction) * (m.score_a - m.score_b), sense=pyo.maximize,
                                    doc="sign * (Q(A) - Q(B))")
        return m


FORMULATION = QMeasure()
