"""MED for nDCG@k (recall-based, Moffat): a ratio of a linear numerator and the ideal DCG.

Numerator (linear):   N(x) = sign * ( sum_i gain(a_i) / log2(i+1) - sum_i gain(b_i) / log2(i+1) ).
Denominator (ideal DCG of the collection).  With C_g the number of documents of the
collection with grade >= g (judged ones anywhere plus assigned ones; linear in x),
the i-th largest gain of the collection is >= gain(g) exactly when i <= C_g, so

    IDCG@k = sum_{g=1..G} (gain(g) - gain(g-1)) * S(min(k, C_g)),   S(m) = sum_{i<=m} 1/log2(i+1).

Unary encoding (Dinkelbach form): the first J_g counts are known (J_g judged documents
of grade >= g); binaries u[g, m], m = J_g+1..J_g+n (n unjudged documents), with
u[g, m] >= u[g, m+1] and J_g + sum_m u[g, m] = C_g, so u[g, m] = [m <= C_g] and
S(min(k, C_g)) = S(min(k, J_g)) + sum_{m<=k} u[g, m] / log2(m+1) exactly.
Objective N - lam * IDCG.

Profile enumeration: a case fixes the capped profile c_g = min(k, C_g) for every g
(C_g = c_g when c_g < k, C_g >= k otherwise); the denominator is then a constant and
the model maximises N / IDCG(c).  Profiles with IDCG = 0 have no relevant document
at all, where both scores and the difference are 0.
"""

from __future__ import annotations

from itertools import product

import pyomo.environ as pyo

from ..metrics.base import log2_discount
from .base import Case, Formulation
from .common import count_at_least, direction_sign, gain_at, judged_count, new_model


def discounted_gain_sum(m, instance, ranking):
    return sum(log2_discount(i) * gain_at(m, instance, d) for i, d in enumerate(ranking, start=1))


def gain_steps(instance) -> dict[int, float]:
    """gain(g) - gain(g-1) for g = 1..G (the ideal-DCG weight of 'at least grade g')."""
    gain = lambda g: instance.metric.gain(g, instance.grading)
    return {g: gain(g) - gain(g - 1) for g in range(1, instance.max_grade + 1)}


def depth_of_ideal(instance) -> int:
    """The k of IDCG@k; without a cutoff every relevant document counts."""
    largest = len(instance.judgments) + len(instance.unjudged)
    return instance.metric.cutoff if instance.metric.cutoff is not None else largest


def prefix_discount(m: int) -> float:
    return sum(log2_discount(i) for i in range(1, m + 1))


class NDCG(Formulation):
    family_name = "nDCG (ratio: DCG over ideal DCG)"
    ratio = True
    strategies = ("enumerate", "dinkelbach")
    warm_start = {"nDCG": "alg1"}

    def _base(self, instance, direction, name):
        m = new_model(instance, direction, name)
        sign = direction_sign(direction)
        m.numerator = pyo.Expression(
            expr=sign * (discounted_gain_sum(m, instance, instance.a) - discounted_gain_sum(m, instance, instance.b)),
            doc="N: signed difference of the two DCG numerators")
        m.at_least = pyo.Expression(m.GRADES, rule=lambda m, g: count_at_least(m, instance, g),
                                    doc="C_g: documents of the collection with grade >= g")
        return m

    def build(self, instance, direction, *, case=None, lam=None):
        k = depth_of_ideal(instance)
        steps = gain_steps(instance)
        if case is not None:
            m = self._base(instance, direction, f"nDCG, ideal profile fixed ({case.label})")
            capped = case.fix
            m.profile = pyo.Constraint(
                m.GRADES, rule=lambda m, g: m.at_least[g] == capped[g] if capped[g] < k else m.at_least[g] >= k,
                doc="fix min(k, C_g) to the case's profile")
            m.denominator = pyo.Expression(expr=case.denominator, doc="IDCG of this profile (a constant)")
            m.objective = pyo.Objective(expr=m.numerator * (1.0 / case.denominator), sense=pyo.maximize,
                                        doc="maximise N / IDCG(profile): the nDCG difference in this case")
            return m
        m = self._base(instance, direction, f"nDCG, Dinkelbach step lam={lam!r}")
        judged = {g: judged_count(instance, g) for g in m.GRADES}
        largest = {g: judged[g] + len(instance.unjudged) for g in m.GRADES}
        m.UNARY = pyo.Set(initialize=[(g, j) for g in m.GRADES for j in range(judged[g] + 1, largest[g] + 1)],
                          ordered=True, doc="(g, m) for the counts m the unjudged documents can add")
        m.u = pyo.Var(m.UNARY, domain=pyo.Binary, doc="u[g,m] = 1 iff C_g >= m (unary count; 1 for m <= judged)")
        m.unary_order = pyo.Constraint(
            [(g, j) for (g, j) in m.UNARY if j > judged[g] + 1], rule=lambda m, g, j: m.u[g, j] <= m.u[g, j - 1],
            doc="u[g,m] <= u[g,m-1]")
        m.unary_count = pyo.Constraint(
            m.GRADES, rule=lambda m, g: judged[g] + sum(m.u[g, j] for j in range(judged[g] + 1, largest[g] + 1))
            == m.at_least[g], doc="judged_g + sum_m u[g,m] = C_g")
        judged_part = sum(steps[g] * prefix_discount(min(k, judged[g])) for g in m.GRADES)
        m.denominator = pyo.Expression(
            expr=judged_part + sum(steps[g] * log2_discount(j) * m.u[g, j] for (g, j) in m.UNARY if j <= k),
            doc="IDCG@k = sum_g (gain(g)-gain(g-1)) sum_{m<=k} [C_g >= m]/log2(m+1)")
        m.objective = pyo.Objective(expr=m.numerator - lam * m.denominator, sense=pyo.maximize,
                                    doc="Dinkelbach: maximise N - lam * IDCG")
        return m

    def cases(self, instance):
        k = depth_of_ideal(instance)
        steps = gain_steps(instance)
        free = len(instance.unjudged)
        grades = range(1, instance.max_grade + 1)
        ranges = [range(min(k, judged_count(instance, g)), min(k, judged_count(instance, g) + free) + 1) for g in grades]
        for profile in product(*ranges):
            if any(later > earlier for earlier, later in zip(profile, profile[1:])):
                continue  # C_1 >= C_2 >= ... >= C_G
            ideal = sum(steps[g] * prefix_discount(c) for g, c in zip(grades, profile))
            if ideal <= 0:
                continue  # no relevant document: both scores 0
            yield Case(label="profile " + ",".join(map(str, profile)), denominator=ideal,
                       fix=dict(zip(grades, profile)))

    def min_denominator(self, instance):
        steps = gain_steps(instance)
        judged = sum(steps[g] * prefix_discount(min(depth_of_ideal(instance), judged_count(instance, g)))
                     for g in steps)
        smallest_positive_step = min((s for s in steps.values() if s > 0), default=1.0)
        return judged if judged > 0 else smallest_positive_step


FORMULATION = NDCG()
