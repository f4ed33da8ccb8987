"""MED for Sakai's Q-measure (Q@k, Q without cutoff): profile enumeration + exact product linearisation.

Definition (SPEC 3, metrics/q.py).  For a ranking X = x_1..x_L (L = k, or the list's
length when shorter or without cutoff), with b_i = [grade(x_i) >= rel], gain u(g),

    Q(X) = (1/R) sum_{i<=L} b_i (beta cg(i) + count(i)) / (beta cg*(i) + i),

cg(i) = sum_{j<=i} u(x_j), count(i) = sum_{j<=i} b_j, R = #documents of the collection
with grade >= rel, cg*(i) the ideal cumulative gain over the collection's positive-gain
documents (constant at its total beyond their number), Q = 0 when R = 0.

Sets.  D unjudged documents of both cut lists (n = |D|), grades 1..G, L = the longer
cut list (k with a cutoff), C_g = #documents of the collection with grade >= g (judged
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
Number of cases: (n+1) for G = 1; for G = 2 at most (n+1) * (min(n, L)+1).

Variables.  x[d,g] (common.py) and, for documents d, e of D with e above d in A or B,
y[d,e,g] = rel(d) * x[e,g] with rel(d) = sum_{g'>=rel} x[d,g'] binary.  The key is
canonical ((d,e) sorted when rel = g = G, where the product is symmetric), so a pair
ranked the same way in both lists, or any pair when G = 1, has one product variable.

Constraints.  one_grade, relevance limits (common.py); the profile: C_rel == R,
C_g == c_g (c_g < L) or C_g >= L; y <= rel(d), y <= x[e,g], y >= rel(d) + x[e,g] - 1
(common.binary_and: exact for binaries).  All coefficients are integers.

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

Size per case: n G binaries x, at most G * (pairs of unjudged documents ranked in
order in A or B) binaries y, 3 constraints per y, G + (n when G > 1) others.
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


CUTS = True


def add_cuts(m, instance, pairs, key, relevance, size, rel, weight):
    cuts = []
    if instance.max_grade > 1:
        bases = {}
        for k in pairs:
            d, e = k[0], k[1]
            bases.setdefault((d, e), set()).add(k)
        # note: symmetric keys: (sorted d,e, G) belongs to both orders; only rel(d) orientation matters for others
        seen = set()
        for ranking in (instance.a, instance.b):
            above = []
            for d in ranking:
                if d not in instance.judgments:
                    for e in above:
                        if (d, e) in seen:
                            continue
                        seen.add((d, e))
                        cuts.append(sum(m.y[key(d, e, g)] for g in m.GRADES if weight[g] != 0) - relevance[d] <= 0)
                    above.append(d)
    for ranking in (instance.a, instance.b):
        for i, d in enumerate(ranking, start=1):
            if d in instance.judgments:
                continue
            for g, limit in size.items():
                if limit >= i:
                    continue
                judged_above = sum(1 for e in ranking[: i - 1] if e in instance.judgments and instance.grading.cap(instance.judgments[e]) >= g)
                lhs = sum(m.y[key(d, e, h)] for e in ranking[: i - 1] if e not in instance.judgments for h in m.GRADES if h >= g)
                lhs = lhs + judged_above * relevance[d] + sum(m.x[d, h] for h in m.GRADES if h >= max(g, rel))
                cuts.append(lhs - limit * relevance[d] <= 0)
    if cuts:
        m.cuts = pyo.ConstraintList(doc="valid inequalities")
        for c in cuts:
            m.cuts.add(c)


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
            m.objective = pyo.Objective(expr=0 * sum(m.x.values(), 0), sense=pyo.maximize)
            return m
        metric, grading = instance.metric, instance.grading
        rel, beta, top = metric.p("rel"), metric.p("beta"), instance.max_grade
        gain = {g: metric.gain(g, grading) for g in range(0, top + 1)}
        weight = {g: beta * gain[g] + (1 if g >= rel else 0) for g in range(1, top + 1)}
        cap = depth(instance)
        size = {g: (cap if at else v) for g, (v, at) in counts.items()}
        ideal = [sum((gain[g] - gain[g - 1]) * min(i, size[g]) for g in size) for i in range(1, cap + 1)]

        def is_relevant(doc):
            return 1 if metric.is_relevant(instance.judgments[doc]) else 0

        def judged_weight(doc):  # beta u(g) + b for a judged document
            grade = instance.judgments[doc]
            return beta * metric.gain(grade, grading) + is_relevant(doc)

        def key(d, e, g):  # y[d,e,g] = rel(d) * x[e,g]; symmetric when rel(.) is x[., G] and g = G
            return tuple(sorted((d, e))) + (g,) if rel == top == g else (d, e, g)

        relevance = {d: sum(m.x[d, g] for g in m.GRADES if g >= rel) for d in instance.unjudged}
        pairs = {}
        for ranking in (instance.a, instance.b):
            above = []
            for d in ranking:
                if d not in instance.judgments:
                    for e in above:
                        for g in m.GRADES:
                            if weight[g] != 0:
                                pairs.setdefault(key(d, e, g), (relevance[d], m.x[e, g]))
                    above.append(d)
        if pairs:
            binary_and(m, "y", pairs, doc="y[d,e,g] = 1 iff d is relevant and e (ranked above d) has grade g")
        if CUTS:
            add_cuts(m, instance, pairs, key, relevance, size, rel, weight)

        def score(ranking):
            total, judged_above, unjudged_above = 0, 0.0, []
            for i, d in enumerate(ranking, start=1):
                if d in instance.judgments:
                    if is_relevant(d):
                        total += (judged_above + judged_weight(d) + sum(
                            weight[g] * m.x[e, g] for e in unjudged_above for g in m.GRADES)) / (beta * ideal[i - 1] + i)
                    judged_above += judged_weight(d)
                else:
                    term = sum(weight[g] * m.x[d, g] for g in m.GRADES if g >= rel) + judged_above * relevance[d]
                    term += sum(weight[g] * m.y[key(d, e, g)] for e in unjudged_above for g in m.GRADES if weight[g] != 0)
                    total += term / (beta * ideal[i - 1] + i)
                    unjudged_above.append(d)
            return total / r

        m.score_a = pyo.Expression(expr=score(instance.a), doc="Q(A) under the case's R and cg*, linear in x, y")
        m.score_b = pyo.Expression(expr=score(instance.b), doc="Q(B) under the case's R and cg*, linear in x, y")
        m.objective = pyo.Objective(expr=direction_sign(direction) * (m.score_a - m.score_b), sense=pyo.maximize,
                                    doc="sign * (Q(A) - Q(B))")
        return m


FORMULATION = QMeasure()
